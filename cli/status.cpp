#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "common.hpp"

namespace deadbolt::cli {

void add_status_command(CLI::App& app, StatusArgs& a) {
    auto* cmd = app.add_subcommand(
        "status", "Show whether a lock is held, by how many, its TTL, waiters and last fence");
    add_url_option(*cmd, a.url);
    cmd->add_option("NAME", a.name, "Lock name")->required();
    cmd->add_flag("--json", a.json, "Print one JSON object");
    cmd->footer(std::string("Examples:\n  deadbolt status nightly-backup\n  deadbolt status --json "
                            "invoices:42\n") +
                kExitCodesHelp);
}

int status_command(const StatusArgs& a) {
    auto client = connect(a.url);
    auto s = client.status(a.name);
    if (a.json) {
        nlohmann::json j{{"name", a.name},
                         {"key", client.lock_key(a.name)},
                         {"held", s.held},
                         {"ttl_ms", s.held ? s.ttl.count() : 0},
                         {"last_fence", s.last_fence},
                         {"kind", s.kind},
                         {"holders", s.holders},
                         {"waiters", s.waiters},
                         {"permits", s.permits},
                         {"writer_waiting", s.writer_waiting}};
        fmt::print("{}\n", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
        return kOk;
    }
    std::string fence =
        s.last_fence ? fmt::format("last fence {}", s.last_fence) : "no fence recorded";
    std::string who;
    if (s.kind == "semaphore")
        who = fmt::format("semaphore, {} of {} permits in use, ", s.holders, s.permits);
    else if (s.kind == "readers")
        who = fmt::format("read by {}, ", s.holders);
    else if (s.kind == "leader")
        who = "a leader is elected (its term is the last fence), ";
    else if (s.kind == "reentrant")
        who = fmt::format("reentrant, {} owner(s), ", s.holders);
    if (s.waiters > 0) fence += fmt::format(", {} queued", s.waiters);
    if (s.writer_waiting) fence += ", a writer waits";
    if (!s.held)
        fmt::print("{}: free ({})\n", a.name, fence);
    else if (s.ttl.count() < 0)
        fmt::print("{}: held, {}no expiry set by its holder ({})\n", a.name, who, fence);
    else
        fmt::print("{}: held, {}expires in {} ({})\n", a.name, who, format_duration(s.ttl), fence);
    return kOk;
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
