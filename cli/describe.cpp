#include "describe.hpp"

#include <fmt/format.h>

#include <ctime>

namespace deadbolt::cli {

std::string utc_time(std::chrono::system_clock::time_point t, bool rfc3339) {
    using namespace std::chrono;
    std::time_t secs = system_clock::to_time_t(time_point_cast<seconds>(t));
    std::tm tm{};
    gmtime_r(&secs, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, rfc3339 ? "%Y-%m-%dT%H:%M:%S" : "%Y-%m-%d %H:%M:%S", &tm);
    if (!rfc3339) return std::string(buf) + " UTC";
    auto ms = duration_cast<milliseconds>(t.time_since_epoch()).count() % 1000;
    return fmt::format("{}.{:03}Z", buf, ms);
}

std::string holder_text(const Holder& h) {
    if (h.host.empty())
        return fmt::format("a client deadbolt did not write ({})",
                           h.client.empty() ? "a custom owner" : h.client);
    std::string out = fmt::format("{} pid {}", h.host, h.pid);
    if (h.since) {
        auto ago = std::chrono::duration_cast<std::chrono::milliseconds>(
            std::chrono::system_clock::now() - *h.since);
        // The server's clock wrote `since`; a local clock behind it must not say "-3ms ago".
        if (ago.count() < 0) ago = std::chrono::milliseconds(0);
        out += fmt::format(", since {} ({} ago)", utc_time(*h.since, false), format_duration(ago));
    }
    return out;
}

std::string status_text(std::string_view name, const LockStatus& s) {
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
    std::string out;
    if (!s.held)
        out = fmt::format("{}: free ({})\n", name, fence);
    else if (s.ttl.count() < 0 && s.session_timeout.count() > 0)
        out = fmt::format("{}: held, {}ends with its holder's session (timeout {}) ({})\n", name,
                          who, format_duration(s.session_timeout), fence);
    else if (s.ttl.count() < 0)
        out = fmt::format("{}: held, {}no expiry set by its holder ({})\n", name, who, fence);
    else
        out = fmt::format("{}: held, {}expires in {} ({})\n", name, who, format_duration(s.ttl),
                          fence);
    // Several holders expire one by one: each line says when.
    bool several = s.kind == "semaphore" || s.kind == "readers";
    for (const auto& h : s.held_by) {
        out += "  held by " + holder_text(h);
        if (several) out += fmt::format(", expires in {}", format_duration(h.ttl));
        out += '\n';
    }
    if (static_cast<int>(s.held_by.size()) < s.holders && !s.held_by.empty())
        out += fmt::format("  and {} more\n", s.holders - static_cast<int>(s.held_by.size()));
    if (s.kind == "leader") out += fmt::format("  value: {}\n", s.value);
    return out;
}

nlohmann::json status_json(std::string_view name, std::string_view key, const LockStatus& s) {
    auto held_by = nlohmann::json::array();
    for (const auto& h : s.held_by) {
        nlohmann::json since = nullptr;
        if (h.since) since = utc_time(*h.since, true);
        nlohmann::json host = nullptr, pid = nullptr;
        if (!h.host.empty()) host = h.host, pid = h.pid;
        held_by.push_back(
            {{"host", host}, {"pid", pid}, {"since", since}, {"ttl_ms", h.ttl.count()}});
        if (!h.client.empty()) held_by.back()["client"] = h.client;  // a foreign holder's kind
    }
    nlohmann::json j{{"name", name},
                     {"key", key},
                     {"held", s.held},
                     {"ttl_ms", s.held ? s.ttl.count() : 0},
                     {"last_fence", s.last_fence},
                     {"kind", s.kind},
                     {"holders", s.holders},
                     {"waiters", s.waiters},
                     {"permits", s.permits},
                     {"writer_waiting", s.writer_waiting},
                     {"held_by", held_by}};
    if (s.kind == "leader") j["value"] = s.value;
    // How the holding ends: at its TTL, or with its holder's session.
    j["session_timeout_ms"] =
        s.session_timeout.count() > 0 ? nlohmann::json(s.session_timeout.count()) : nullptr;
    return j;
}

}  // namespace deadbolt::cli
