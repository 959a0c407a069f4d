// deadbolt: distributed locks from the shell.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>

#include "commands.hpp"
#include "common.hpp"

namespace {

// The nearest subcommand or option to the first word CLI11 could not place.
std::string did_you_mean(CLI::App& app, int argc, char** argv) {
    std::vector<std::string> commands;
    for (const auto* sub : app.get_subcommands({})) commands.push_back(sub->get_name());
    if (argc < 2) return {};
    std::string first = argv[1];
    CLI::App* sub = nullptr;
    for (auto* s : app.get_subcommands({}))
        if (s->get_name() == first) sub = s;
    if (!sub) return first.rfind('-', 0) == 0 ? "" : deadbolt::cli::nearest(first, commands);
    std::vector<std::string> options;
    for (const auto* o : sub->get_options())
        for (const auto& n : o->get_lnames()) options.push_back("--" + n);
    for (int i = 2; i < argc && std::string(argv[i]) != "--"; ++i) {
        std::string w = argv[i];
        w = w.substr(0, w.find('='));
        if (w.rfind("--", 0) == 0 && std::find(options.begin(), options.end(), w) == options.end())
            return deadbolt::cli::nearest(w, options);
    }
    return {};
}

}  // namespace

int main(int argc, char** argv) {
    using namespace deadbolt::cli;
    CLI::App app{
        "deadbolt: distributed locks with fencing tokens on Redis, etcd, ZooKeeper, PostgreSQL "
        "and MariaDB"};
    app.set_version_flag("--version", std::string("deadbolt ") + DEADBOLT_VERSION);
    app.require_subcommand(1);
    app.footer(kExitCodesHelp);
    RunArgs run;
    RunArgs elect;
    StatusArgs status;
    StatusArgs force_unlock;
    ListArgs list;
    ThrottleArgs throttle;
    FencedSetArgs fenced;
#ifdef DEADBOLT_CLI_REDIS_ACL
    AclArgs acl;
#endif
    InitArgs init;
    FencedGetArgs fenced_get;
    add_run_command(app, run);
    add_elect_command(app, elect);
    add_status_command(app, status);
    add_list_command(app, list);
    TopArgs top;
    add_top_command(app, top);
    add_force_unlock_command(app, force_unlock);
    add_throttle_command(app, throttle);
    add_fenced_set_command(app, fenced);
    add_fenced_get_command(app, fenced_get);
#ifdef DEADBOLT_CLI_REDIS_ACL  // Redis's own command: only when its engine is linked in
    add_acl_command(app, acl);
#endif
    add_init_command(app, init);
#ifdef DEADBOLT_CLI_EXPORTER  // when deadbolt::metrics was built
    ExporterArgs exporter;
    add_exporter_command(app, exporter);
#endif
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        describe_url_forms();
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        describe_url_forms();
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        app.exit(e);
        if (auto hint = did_you_mean(app, argc, argv); !hint.empty())
            fmt::print(stderr, "did you mean '{}'?\n", hint);
        return kUsage;
    }
    try {
        if (app.got_subcommand("run")) return run_command(run);
        if (app.got_subcommand("elect")) return run_command(elect);
        if (app.got_subcommand("status")) return status_command(status);
        if (app.got_subcommand("list")) return list_command(list);
        if (app.got_subcommand("top")) return top_command(top);
        if (app.got_subcommand("force-unlock")) return force_unlock_command(force_unlock);
        if (app.got_subcommand("throttle")) return throttle_command(throttle);
        if (app.got_subcommand("fenced-set")) return fenced_set_command(fenced);
        if (app.got_subcommand("fenced-get")) return fenced_get_command(fenced_get);
#ifdef DEADBOLT_CLI_REDIS_ACL
        if (app.got_subcommand("acl")) return acl_command(acl);
#endif
        if (app.got_subcommand("init")) return init_command(init);
#ifdef DEADBOLT_CLI_EXPORTER
        if (app.got_subcommand("exporter")) return exporter_command(exporter);
#endif
    } catch (const std::exception& e) {
        return report(e);
    }
    return kUsage;
}
