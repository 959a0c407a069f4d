#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "common.hpp"
#include "describe.hpp"

namespace deadbolt::cli {

void add_status_command(CLI::App& app, StatusArgs& a) {
    auto* cmd = app.add_subcommand(
        "status",
        "Show whether a lock is held, by whom and since when, its TTL, waiters and "
        "last fence; exit 0 when held, 1 when free");
    add_url_option(*cmd, a.url);
    cmd->add_option("NAME", a.name, "Lock name")->required();
    cmd->add_flag("--json", a.json, "Print one JSON object");
    cmd->add_flag("-q,--quiet", a.quiet, "Print nothing: the exit code says held (0) or free (1)");
    cmd->footer(std::string("Examples:\n  deadbolt status nightly-backup\n  deadbolt status --json "
                            "invoices:42\n  deadbolt status -q job && echo busy\n") +
                kExitCodesHelp);
}

int status_command(const StatusArgs& a) {
    auto client = connect(a.url);
    auto s = client.status(a.name);
    if (a.quiet) return s.held ? kOk : kFree;
    if (a.json)
        fmt::print("{}\n", status_json(a.name, client.lock_key(a.name), s)
                               .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    else
        fmt::print("{}", status_text(a.name, s));
    return s.held ? kOk : kFree;
}

}  // namespace deadbolt::cli

namespace deadbolt::cli {

void add_force_unlock_command(CLI::App& app, StatusArgs& a) {
    auto* cmd = app.add_subcommand(
        "force-unlock", "Free NAME whatever holds it; its holders report the loss (exit 70)");
    add_url_option(*cmd, a.url);
    cmd->add_option("NAME", a.name, "Lock name")->required();
    cmd->footer(std::string("Waiters are woken at once. Each evicted holder finds the lock gone "
                            "at its next renewal (its `deadbolt run` stops the command and "
                            "exits 70); later holders get higher fences.\n") +
                kExitCodesHelp);
}

int force_unlock_command(const StatusArgs& a) {
    auto client = connect(a.url);
    auto was = client.force_unlock(a.name);
    if (was == "free")
        fmt::print("{}: was not held\n", a.name);
    else
        fmt::print("{}: freed (it was held as {})\n", a.name, was);
    return kOk;
}

}  // namespace deadbolt::cli
