#include <fmt/format.h>

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
    cmd->add_option("KEY", a.key, "Key to write")->required();
    cmd->add_option("VALUE", a.value, "Value to write")->required();
    cmd->footer(std::string("Examples:\n  deadbolt run job -- sh -c 'deadbolt fenced-set --fence "
                            "\"$DEADBOLT_FENCE\" report:latest done'\n") +
                kExitCodesHelp);
}

int fenced_set_command(const FencedSetArgs& a) {
    std::string why;
    auto fence = parse_fence(a.fence, &why);
    if (!fence) throw UsageProblem("--fence: " + why);
    auto client = connect(a.url);
    auto r = client.fenced_set(a.key, a.value, *fence);
    if (r.accepted) return kOk;
    fmt::print(stderr,
               "deadbolt: write to {} refused: fence {} is older than {} (a newer holder wrote)\n",
               a.key, *fence, r.highest);
    return kStaleFence;
}

}  // namespace deadbolt::cli
