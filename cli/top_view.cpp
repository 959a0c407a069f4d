#include "top_view.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "deadbolt/duration.hpp"

namespace deadbolt::cli {

namespace {

using std::chrono::milliseconds;
using std::chrono::system_clock;

std::string who(const Holder& h) {
    if (!h.host.empty()) return fmt::format("{} pid {}", h.host, h.pid);
    return h.client.empty() ? "(not deadbolt)" : fmt::format("({})", h.client);
}

std::string who(const LockStatus& s) {
    if (s.held_by.empty()) return s.holders > 0 ? fmt::format("{} holders", s.holders) : "-";
    auto out = who(s.held_by.front());
    if (s.holders > 1) out += fmt::format(" +{}", s.holders - 1);
    return out;
}

// The holding a mutex-like lock stands for: a new one is a new grant, whoever holds it.
bool same_holding(const LockStatus& a, const LockStatus& b) {
    if (a.last_fence != b.last_fence) return false;
    if (a.held_by.empty() || b.held_by.empty()) return a.held_by.empty() == b.held_by.empty();
    const auto &x = a.held_by.front(), &y = b.held_by.front();
    return x.host == y.host && x.pid == y.pid && x.since == y.since && x.client == y.client;
}

bool counted(const LockStatus& s) {
    return s.kind == "semaphore" || s.kind == "readers";
}

std::string fenced(const LockStatus& s) {
    return s.last_fence ? fmt::format(", fence {}", s.last_fence) : std::string();
}

// The holding's age: its oldest listed holder's, by the server's clock; -1 ms when unknown.
milliseconds age(const LockStatus& s, system_clock::time_point now) {
    milliseconds oldest{-1};
    for (const auto& h : s.held_by)
        if (h.since)
            oldest = std::max(oldest,
                              std::max(milliseconds(0),
                                       std::chrono::duration_cast<milliseconds>(now - *h.since)));
    return oldest;
}

std::string ttl_text(const LockStatus& s) {
    if (s.ttl.count() >= 0) return format_duration(s.ttl);
    return s.session_timeout.count() > 0 ? "session" : "never";
}

// Longest TTL first would hide the ones about to go: -1 (never) sorts last.
milliseconds ttl_key(const LockStatus& s) {
    return s.ttl.count() >= 0 ? s.ttl : milliseconds::max();
}

std::string fit(std::string s, std::size_t width) {
    if (s.size() <= width) return s;
    if (width == 0) return {};
    s.resize(width - 1);
    return s + "~";  // cut, and said to be
}

}  // namespace

const char* sort_name(TopSort s) {
    switch (s) {
        case TopSort::name:
            return "name";
        case TopSort::age:
            return "age";
        case TopSort::waiters:
            return "waiters";
        case TopSort::ttl:
            return "ttl";
    }
    return "name";
}

TopSort next_sort(TopSort s) {
    switch (s) {
        case TopSort::name:
            return TopSort::age;
        case TopSort::age:
            return TopSort::waiters;
        case TopSort::waiters:
            return TopSort::ttl;
        case TopSort::ttl:
            return TopSort::name;
    }
    return TopSort::name;
}

std::vector<TopEvent> top_changes(const std::vector<ListedLock>& before,
                                  const std::vector<ListedLock>& now, system_clock::time_point at,
                                  milliseconds interval) {
    std::map<std::string, const LockStatus*> was, is;
    for (const auto& l : before)
        if (l.status.held) was[l.name] = &l.status;
    for (const auto& l : now)
        if (l.status.held) is[l.name] = &l.status;
    std::vector<TopEvent> out;
    for (const auto& [name, old] : was) {
        if (is.count(name)) continue;
        bool ran_out = old->ttl.count() >= 0 && old->ttl <= interval;
        out.push_back({at, ran_out ? "expired" : "released", name, who(*old)});
    }
    for (const auto& [name, cur] : is) {
        auto it = was.find(name);
        if (it == was.end()) {
            out.push_back({at, "granted", name, who(*cur) + fenced(*cur)});
        } else if (cur->kind != it->second->kind) {  // readers gave way to a writer, say
            out.push_back({at, "granted", name,
                           fmt::format("{}{} as {} (was {})", who(*cur), fenced(*cur), cur->kind,
                                       it->second->kind)});
        } else if (counted(*cur)) {
            int more = cur->holders - it->second->holders;
            if (more > 0)
                out.push_back(
                    {at, "granted", name, fmt::format("{} more, {} held", more, cur->holders)});
            if (more < 0)
                out.push_back(
                    {at, "released", name, fmt::format("{} fewer, {} held", -more, cur->holders)});
        } else if (!same_holding(*it->second, *cur)) {
            out.push_back(
                {at, "granted", name,
                 fmt::format("{}{} (was {})", who(*cur), fenced(*cur), who(*it->second))});
        }
    }
    return out;
}

std::vector<std::string> top_lines(const std::vector<ListedLock>& locks,
                                   const std::deque<TopEvent>& events, const TopScreen& screen,
                                   system_clock::time_point now) {
    const bool whole = screen.whole;
    const std::size_t rows = screen.rows ? screen.rows : 24;
    const std::size_t cols = whole ? std::string::npos : screen.cols ? screen.cols : 80;
    std::vector<const ListedLock*> held;
    int waiting = 0;
    for (const auto& l : locks) {
        waiting += l.status.waiters;
        if (l.status.held || l.status.waiters > 0) held.push_back(&l);
    }
    auto by = [&](const ListedLock* a, const ListedLock* b) {
        switch (screen.sort) {
            case TopSort::age:
                return age(a->status, now) > age(b->status, now);
            case TopSort::waiters:
                return a->status.waiters > b->status.waiters;
            case TopSort::ttl:
                return ttl_key(a->status) < ttl_key(b->status);
            case TopSort::name:
                break;
        }
        return a->name < b->name;
    };
    std::stable_sort(held.begin(), held.end(), [&](auto* a, auto* b) {
        if (by(a, b)) return true;
        return !by(b, a) && a->name < b->name;
    });

    std::vector<std::string> out;
    out.push_back(fit(
        fmt::format("deadbolt top  {}  {} locks, {} waiting  sort: {}{}", screen.title, held.size(),
                    waiting, sort_name(screen.sort), screen.keys ? "  (q quits, s sorts)" : ""),
        cols));
    out.push_back(screen.error.empty() ? std::string()
                                       : fit("the last listing failed: " + screen.error, cols));
    std::vector<std::vector<std::string>> table{
        {"NAME", "KIND", "HOLDER", "AGE", "FENCE", "TTL", "WAITERS"}};
    for (const auto* l : held) {
        const auto& s = l->status;
        auto a = age(s, now);
        table.push_back({l->name, s.held ? s.kind : "free", who(s),
                         a.count() >= 0 ? format_duration(a) : "-",
                         s.last_fence ? std::to_string(s.last_fence) : "-",
                         s.held ? ttl_text(s) : "-", std::to_string(s.waiters)});
    }
    // The events keep a third of the screen (at least 3 lines) when there are any.
    const std::size_t event_rows = events.empty() ? 0
                                   : whole        ? events.size() + 1
                                                  : std::max<std::size_t>(3, rows / 3);
    // Lines below the table: the events, a blank line before them, and "... and N more".
    const std::size_t below = (event_rows ? event_rows + 1 : 0) + 1;
    const std::size_t room = whole                           ? table.size()
                             : rows > out.size() + below + 1 ? rows - out.size() - below
                                                             : 2;
    std::size_t shown = std::min(table.size(), room);
    std::vector<std::size_t> width(table.front().size(), 0);
    for (std::size_t r = 0; r < shown; ++r)
        for (std::size_t i = 0; i < width.size(); ++i)
            width[i] = std::max(width[i], table[r][i].size());
    if (!whole)  // long names are cut
        width[0] = std::min<std::size_t>(width[0], std::max<std::size_t>(cols / 3, 4));
    for (std::size_t r = 0; r < shown; ++r) {
        std::string line;
        for (std::size_t i = 0; i < width.size(); ++i)
            line += i + 1 < width.size()
                        ? fmt::format("{:<{}}  ", fit(table[r][i], width[i]), width[i])
                        : table[r][i];
        out.push_back(fit(line, cols));
    }
    if (shown < table.size()) out.push_back(fmt::format("... and {} more", table.size() - shown));
    if (event_rows) {
        out.push_back(std::string());
        std::size_t first = events.size() > event_rows - 1 ? events.size() - (event_rows - 1) : 0;
        out.push_back("LAST EVENTS (UTC)");
        for (std::size_t i = first; i < events.size(); ++i) {
            const auto& e = events[i];
            auto t = std::chrono::system_clock::to_time_t(e.at);
            std::tm tm{};
            gmtime_r(&t, &tm);
            out.push_back(fit(fmt::format("{:02}:{:02}:{:02}  {:<8}  {}  {}", tm.tm_hour, tm.tm_min,
                                          tm.tm_sec, e.what, e.name, e.detail),
                              cols));
        }
    }
    // Names and holders are the engine's bytes: a control character among them would move
    // the cursor or worse on the user's terminal.
    for (auto& line : out)
        for (auto& c : line)
            if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
    return out;
}

}  // namespace deadbolt::cli
