// deadbolt: distributed locks from the shell.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "common.hpp"

int main(int argc, char** argv) {
    using namespace deadbolt::cli;
    CLI::App app{"deadbolt: distributed locks with fencing tokens on Redis"};
    app.require_subcommand(1);
    app.footer(kExitCodesHelp);
    RunArgs run;
    RunArgs elect;
    StatusArgs status;
    ThrottleArgs throttle;
    FencedSetArgs fenced;
    AclArgs acl;
    FencedGetArgs fenced_get;
    add_run_command(app, run);
    add_elect_command(app, elect);
    add_status_command(app, status);
    add_throttle_command(app, throttle);
    add_fenced_set_command(app, fenced);
    add_fenced_get_command(app, fenced_get);
    add_acl_command(app, acl);
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        app.exit(e);
        return kUsage;
    }
    try {
        if (app.got_subcommand("run")) return run_command(run);
        if (app.got_subcommand("elect")) return run_command(elect);
        if (app.got_subcommand("status")) return status_command(status);
        if (app.got_subcommand("throttle")) return throttle_command(throttle);
        if (app.got_subcommand("fenced-set")) return fenced_set_command(fenced);
        if (app.got_subcommand("fenced-get")) return fenced_get_command(fenced_get);
        if (app.got_subcommand("acl")) return acl_command(acl);
    } catch (const std::exception& e) {
        return report(e);
    }
    return kUsage;
}
