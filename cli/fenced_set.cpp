// deadbolt fenced-set / fenced-get: fenced writes (and read-modify-writes) of data kept in Redis.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <charconv>

#include "commands.hpp"
#include "common.hpp"

namespace deadbolt::cli {

void add_fenced_set_command(CLI::App& app, FencedSetArgs& a) {
    auto* cmd = app.add_subcommand(
        "fenced-set",
        "Write VALUE to KEY only if FENCE is not lower than the highest fence KEY has seen");
    add_url_option(*cmd, a.url);
    cmd->add_option("--fence", a.fence,
                    "Fencing token (a decimal integer), e.g. $DEADBOLT_FENCE inside `deadbolt run`")
        ->required();
    cmd->add_option("--if-version", a.if_version,
                    "Write only if KEY is still at this version (from fenced-get): a "
                    "read-modify-write that loses no update even when holders overlap");
    cmd->add_option("KEY", a.key, "Key to write")->required();
    cmd->add_option("VALUE", a.value, "Value to write")->required();
    cmd->footer(std::string("Examples:\n  deadbolt run job -- sh -c 'deadbolt fenced-set --fence "
                            "\"$DEADBOLT_FENCE\" report:latest done'\n"
                            "  deadbolt run job -- sh -c 'eval \"$(deadbolt fenced-get n)\"; "
                            "deadbolt fenced-set --fence \"$DEADBOLT_FENCE\" --if-version "
                            "\"$DEADBOLT_VERSION\" n $((DEADBOLT_VALUE + 1))'\n") +
                kExitCodesHelp);
}

int fenced_set_command(const FencedSetArgs& a) {
    std::string why;
    auto fence = parse_fence(a.fence, &why);
    if (!fence) throw UsageProblem("--fence: " + why);
    std::optional<std::uint64_t> version;
    if (!a.if_version.empty()) {
        std::uint64_t v = 0;
        auto [p, ec] =
            std::from_chars(a.if_version.data(), a.if_version.data() + a.if_version.size(), v);
        if (ec != std::errc() || p != a.if_version.data() + a.if_version.size())
            throw UsageProblem("--if-version: '" + a.if_version +
                               "' is not a version: pass DEADBOLT_VERSION from fenced-get");
        version = v;
    }
    auto client = connect(a.url);
    auto r = version ? client.fenced_cas(a.key, a.value, *fence, *version)
                     : client.fenced_set(a.key, a.value, *fence);
    if (r.accepted) return kOk;
    if (r.stale_fence)
        fmt::print(stderr,
                   "deadbolt: write to {} refused: fence {} is older than {} (a newer holder "
                   "wrote)\n",
                   a.key, *fence, r.highest);
    else
        fmt::print(stderr,
                   "deadbolt: write to {} refused: it changed since version {} (now {}): read "
                   "it again\n",
                   a.key, *version, r.version);
    return kStaleFence;
}

void add_fenced_get_command(CLI::App& app, FencedGetArgs& a) {
    auto* cmd = app.add_subcommand(
        "fenced-get", "Print KEY's value and version together, for fenced-set --if-version");
    add_url_option(*cmd, a.url);
    cmd->add_option("KEY", a.key, "Key to read")->required();
    cmd->add_flag("--json", a.json, "Print {\"value\": ..., \"version\": N} instead");
    cmd->footer(std::string("Prints shell assignments for eval: DEADBOLT_VERSION=N and "
                            "DEADBOLT_VALUE='...'. A key that does not exist prints "
                            "DEADBOLT_VALUE='' (--json: null) and exits 1, so a script can "
                            "tell it from an empty value (exit 0).\n") +
                kExitCodesHelp);
}

int fenced_get_command(const FencedGetArgs& a) {
    auto client = connect(a.url);
    auto v = client.fenced_get(a.key);
    if (a.json) {
        nlohmann::json j{{"value", v.value ? nlohmann::json(*v.value) : nlohmann::json()},
                         {"version", v.version}};
        fmt::print("{}\n", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
        return v.value ? kOk : kMissing;
    }
    std::string quoted = "'";
    for (char c : v.value.value_or(""))
        quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    fmt::print("DEADBOLT_VERSION={}\nDEADBOLT_VALUE={}'\n", v.version, quoted);
    return v.value ? kOk : kMissing;
}

}  // namespace deadbolt::cli
