#include "common.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include "engines.hpp"

namespace deadbolt::cli {

const char* const kExitCodesHelp =
    "Exit codes: 0 ok (run: the command's own code), 1 status: free / list: none / fenced-get: "
    "no such key, 64 usage error, "
    "65 stale fence refused, 69 "
    "server unreachable or "
    "refused, 70 lease lost while the command ran, 75 lock not obtained / throttled, 126/127 "
    "command not executable / not found.";

std::chrono::milliseconds duration_arg(const std::string& option, const std::string& value) {
    std::string why;
    // A bare number is seconds, as flock -w takes it.
    bool bare = !value.empty() && value.find_first_not_of("0123456789.") == std::string::npos;
    auto d = parse_duration(bare ? value + "s" : value, &why);
    if (!d) throw UsageProblem(fmt::format("{}: {}", option, why));
    return *d;
}

namespace {
std::string password_file;  // --password-file of the subcommand that runs
}  // namespace

namespace {
std::vector<CLI::Option*> url_options;  // described once the engines are loaded, for --help

std::string url_help() {
    std::string forms;
    for (const auto& form : deadbolt::Client::url_forms())
        forms += (forms.empty() ? "" : "; ") + form;
    return "Engine URL, one of this build's engines: " + forms +
           " (default: $DEADBOLT_URL or redis://127.0.0.1:6379)";
}
}  // namespace

void add_url_option(CLI::App& cmd, std::string& url) {
    const char* env = std::getenv("DEADBOLT_URL");
    url = env && *env ? env : "redis://127.0.0.1:6379";
    url_options.push_back(cmd.add_option("--url", url, "Engine URL"));
    cmd.add_option("--password-file", password_file,
                   "Read the password from this file's first line (or set $DEADBOLT_PASSWORD) "
                   "instead of putting it in the URL, where `ps` shows it");
}

void describe_url_forms() {
    load_all_engines();
    auto help = url_help();
    for (auto* option : url_options) option->description(help);
}

deadbolt::Client connect(const std::string& url) {
    load_engine_for(url);
    ClientOptions o;
    if (!password_file.empty()) {
        std::ifstream in(password_file);
        if (!in || !std::getline(in, o.password))
            throw UsageProblem(fmt::format("--password-file: cannot read '{}'", password_file));
    } else if (const char* pw = std::getenv("DEADBOLT_PASSWORD"); pw && *pw) {
        o.password = pw;
    }
    auto client = Client::connect(url, o);
    for (const auto& w : client.warnings()) fmt::print(stderr, "deadbolt: warning: {}\n", w);
    return client;
}

std::string nearest(const std::string& word, const std::vector<std::string>& candidates) {
    auto distance = [](const std::string& a, const std::string& b) {
        std::vector<std::size_t> row(b.size() + 1);
        for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
        for (std::size_t i = 1; i <= a.size(); ++i) {
            std::size_t diag = row[0];
            row[0] = i;
            for (std::size_t j = 1; j <= b.size(); ++j) {
                std::size_t up = row[j];
                row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] != b[j - 1])});
                diag = up;
            }
        }
        return row[b.size()];
    };
    std::string best;
    std::size_t best_d = std::max<std::size_t>(2, word.size() / 3) + 1;
    for (const auto& c : candidates)
        if (auto d = distance(word, c); d < best_d) best_d = d, best = c;
    return best;
}

int report(const std::exception& e) {
    fmt::print(stderr, "deadbolt: {}\n", e.what());
    if (dynamic_cast<const UsageProblem*>(&e) || dynamic_cast<const UsageError*>(&e)) return kUsage;
    if (auto* le = dynamic_cast<const LockError*>(&e))
        return le->code() == errc::not_acquired ? kNotObtained : kServer;
    return kServer;
}

}  // namespace deadbolt::cli
