// deadbolt list: the held locks under the prefix, found with SCAN.
#include <fmt/format.h>

#include <algorithm>

#include "commands.hpp"
#include "common.hpp"
#include "describe.hpp"

namespace deadbolt::cli {

void add_list_command(CLI::App& app, ListArgs& a) {
    auto* cmd = app.add_subcommand(
        "list", "List held locks (kind, holders, TTL, waiters, who); exit 0 when any, 1 when none");
    add_url_option(*cmd, a.url);
    cmd->add_option("PATTERN", a.pattern, "Glob over lock names (* ? [abc]); default: every lock");
    cmd->add_flag("--json", a.json, "Print one JSON array of status objects");
    cmd->add_flag("--all", a.all,
                  "Also list plain strings and numbers deadbolt did not write (redis-py locks "
                  "look like that, and so does any other string or counter in the database)");
    cmd->footer(std::string("Finds keys with SCAN (never KEYS) under the URL's prefix, on every "
                            "node of a cluster or Redlock.\nExamples:\n  deadbolt list\n  "
                            "deadbolt list 'invoices:*' --json\n") +
                kExitCodesHelp);
}

namespace {

std::string who_of(const LockStatus& s) {
    if (s.held_by.empty()) return "-";
    const Holder& h = s.held_by.front();
    std::string who = !h.host.empty()    ? fmt::format("{} pid {}", h.host, h.pid)
                      : h.client.empty() ? "(not deadbolt)"
                                         : fmt::format("({})", h.client);
    if (s.holders > 1) who += fmt::format(" and {} more", s.holders - 1);
    return who;
}

}  // namespace

int list_command(const ListArgs& a) {
    auto client = connect(a.url);
    auto locks = client.list(a.pattern, a.all);
    if (a.json) {
        auto out = nlohmann::json::array();
        for (const auto& l : locks)
            out.push_back(status_json(l.name, client.lock_key(l.name), l.status));
        fmt::print("{}\n", out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
        return locks.empty() ? kFree : kOk;
    }
    std::vector<std::vector<std::string>> rows{
        {"NAME", "KIND", "HOLDERS", "EXPIRES", "WAITERS", "HELD BY"}};
    for (const auto& l : locks) {
        const auto& s = l.status;
        rows.push_back({l.name, s.kind, std::to_string(s.holders),
                        s.ttl.count() >= 0              ? format_duration(s.ttl)
                        : s.session_timeout.count() > 0 ? "with session"
                                                        : "never",
                        std::to_string(s.waiters), who_of(s)});
    }
    std::vector<std::size_t> width(rows.front().size(), 0);
    for (const auto& r : rows)
        for (std::size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
    for (const auto& r : rows) {
        std::string line;
        for (std::size_t i = 0; i < r.size(); ++i)
            line += i + 1 < r.size() ? fmt::format("{:<{}}  ", r[i], width[i]) : r[i];
        fmt::print("{}\n", line);
    }
    return locks.empty() ? kFree : kOk;
}

}  // namespace deadbolt::cli
