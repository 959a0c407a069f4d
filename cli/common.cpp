#include "common.hpp"

#include <fmt/format.h>

#include <cstdlib>

namespace deadbolt::cli {

const char* const kExitCodesHelp =
    "Exit codes: 0 ok (run: the command's own code), 64 usage error, 65 stale fence refused, 69 "
    "server unreachable or "
    "refused, 70 lease lost while the command ran, 75 lock not obtained / throttled, 126/127 "
    "command not executable / not found.";

std::chrono::milliseconds duration_arg(const std::string& option, const std::string& value) {
    std::string why;
    auto d = parse_duration(value, &why);
    if (!d) throw UsageProblem(fmt::format("{}: {}", option, why));
    return *d;
}

void add_url_option(CLI::App& cmd, std::string& url) {
    const char* env = std::getenv("DEADBOLT_URL");
    url = env && *env ? env : "redis://127.0.0.1:6379";
    cmd.add_option("--url", url,
                   "Server URL: redis://[user:pass@]host[:port][/db], rediss://..., "
                   "unix:///path.sock, redlock://host:port,host:port,host:port "
                   "(default: $DEADBOLT_URL or redis://127.0.0.1:6379)");
}

deadbolt::Client connect(const std::string& url) {
    auto client = Client::connect(url);
    for (const auto& w : client.warnings()) fmt::print(stderr, "deadbolt: warning: {}\n", w);
    return client;
}

int report(const std::exception& e) {
    fmt::print(stderr, "deadbolt: {}\n", e.what());
    if (dynamic_cast<const UsageProblem*>(&e) || dynamic_cast<const UsageError*>(&e)) return kUsage;
    if (auto* le = dynamic_cast<const LockError*>(&e))
        return le->code() == errc::not_acquired ? kNotObtained : kServer;
    return kServer;
}

}  // namespace deadbolt::cli
