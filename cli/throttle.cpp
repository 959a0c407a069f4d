#include <fmt/format.h>

#include "commands.hpp"
#include "common.hpp"

namespace deadbolt::cli {

void add_throttle_command(CLI::App& app, ThrottleArgs& a) {
    auto* cmd = app.add_subcommand(
        "throttle",
        "Succeed if KEY is within its rate (one use per --window, up to --burst at once), else "
        "fail with the time left");
    add_url_option(*cmd, a.url);
    cmd->add_option("--window", a.window, "How long one use blocks the next, e.g. 5s")->required();
    cmd->add_option("--burst", a.burst,
                    "Uses allowed at once after a quiet spell (a token bucket of this size that "
                    "refills one token per --window; default 1)");
    cmd->add_option("KEY", a.key, "What to throttle, e.g. submit:user-42")->required();
    cmd->footer(
        std::string("Examples:\n  deadbolt throttle --window 5s submit:user-42 && ./submit.sh\n"
                    "  deadbolt throttle --window 1m --burst 10 api:user-42 || exit 0\n") +
        kExitCodesHelp);
}

int throttle_command(const ThrottleArgs& a) {
    auto window = duration_arg("--window", a.window);
    auto client = connect(a.url);
    auto limiter = client.rate_limiter(a.key, {.rate = 1, .per = window, .burst = a.burst});
    auto r = limiter.try_acquire();
    if (r.allowed) return kOk;
    fmt::print(stderr,
               "deadbolt: {} is over its rate (one use per {}, burst {}); try again in {}\n", a.key,
               format_duration(window), a.burst, format_duration(r.retry_in));
    return kNotObtained;
}

}  // namespace deadbolt::cli
