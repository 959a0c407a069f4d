#include <fmt/format.h>

#include "commands.hpp"
#include "common.hpp"

namespace deadbolt::cli {

void add_throttle_command(CLI::App& app, ThrottleArgs& a) {
    auto* cmd = app.add_subcommand(
        "throttle",
        "Succeed and record KEY if it was not used within --window, else fail with the time left");
    add_url_option(*cmd, a.url);
    cmd->add_option("--window", a.window, "How long one use blocks the next, e.g. 5s")->required();
    cmd->add_option("KEY", a.key, "What to throttle, e.g. submit:user-42")->required();
    cmd->footer(
        std::string("Examples:\n  deadbolt throttle --window 5s submit:user-42 && ./submit.sh\n") +
        kExitCodesHelp);
}

int throttle_command(const ThrottleArgs& a) {
    auto window = duration_arg("--window", a.window);
    auto client = Client::connect(a.url);
    auto r = client.throttle(a.key, window);
    if (r.allowed) return kOk;
    fmt::print(stderr, "deadbolt: {} was used within the last {}; try again in {}\n", a.key,
               format_duration(window), format_duration(r.retry_in));
    return kNotObtained;
}

}  // namespace deadbolt::cli
