#include "backends/redis/acl.hpp"

#include "backends/redis/keys.hpp"
#include "deadbolt/acl.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

namespace deadbolt::detail {
namespace {

// Sent by the client itself: scripts, the handshake, waiting, a latch's read.
constexpr std::string_view kClientCommands[] = {
    "EVAL", "EVALSHA", "PING", "SELECT", "SUBSCRIBE", "UNSUBSCRIBE", "GET", "EXISTS", "PTTL"};

void add_kind(std::vector<const Script*>& v, const LeaseKind& k) {
    v.insert(v.end(), {k.extend, k.release, k.check});
    if (k.give_back) v.push_back(k.give_back);
}

}  // namespace

const std::vector<const Script*>& all_scripts() {
    static const std::vector<const Script*> all = [] {
        std::vector<const Script*> v = {
            &acquire_script(),           &release_script(),       &raise_fence_script(),
            &reentrant_acquire_script(), &fair_acquire_script(),  &read_acquire_script(),
            &write_acquire_script(),     &write_abandon_script(), &zset_live_count_script(),
            &semaphore_acquire_script(), &multi_acquire_script(), &campaign_script(),
            &proclaim_script(),          &leader_read_script(),   &latch_set_script(),
            &latch_count_down_script(),  &status_script(),        &fenced_set_script(),
            &fenced_get_script(),        &rate_take_script(),     &force_unlock_script()};
        for (const LeaseKind* k : {&mutex_kind(), &reentrant_kind(), &fair_kind(),
                                   &zset_holder_kind(), &multi_kind(), &leader_kind()})
            add_kind(v, *k);
        return v;
    }();
    return all;
}

std::vector<std::string> acl_commands() {
    std::vector<std::string> out(std::begin(kClientCommands), std::end(kClientCommands));
    for (const Script* s : all_scripts())
        for (auto& c : script_commands(s->source)) out.push_back(std::move(c));
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

namespace {

std::string lower_grants() {
    std::string out;
    for (const auto& c : acl_commands()) {
        out += " +";
        for (char ch : c) out += static_cast<char>(ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch);
    }
    return out;
}

}  // namespace

std::string acl_setuser(std::string_view user, std::string_view prefix) {
    std::string p(prefix);
    // Lock keys <prefix><name>; auxiliary keys and channels {<prefix><name>}:suffix, or
    // {s<n>}<prefix><name>:suffix for names with a stray '}' (keys.cpp).
    std::string keys = p.empty() ? " ~*" : " ~" + p + "* ~{" + p + "* ~{s*}" + p + "*";
    std::string channels = p.empty() ? " &*" : " &{" + p + "* &{s*}" + p + "*";
    return "ACL SETUSER " + std::string(user) + " on >PASSWORD resetchannels" + keys + channels +
           " -@all" + lower_grants();
}

std::string refused_command(std::string_view text) {
    constexpr std::string_view kScript = "script: ", kLine = "@user_script:";
    auto s = text.find(kScript);
    auto l = text.find(kLine);
    if (s == std::string_view::npos || l == std::string_view::npos) return {};
    auto sha = text.substr(s + kScript.size(), 40);
    int line = 0;
    auto digits = text.substr(l + kLine.size());
    std::from_chars(digits.data(), digits.data() + digits.size(), line);
    for (const Script* script : all_scripts()) {
        if (script->sha1 != sha) continue;
        std::string_view src = script->source;
        for (int i = 1; i < line && !src.empty(); ++i) {
            auto nl = src.find('\n');
            src = nl == std::string_view::npos ? std::string_view() : src.substr(nl + 1);
        }
        auto cmds = script_commands(src.substr(0, src.find('\n')));
        std::string out;
        for (const auto& c : cmds) out += (out.empty() ? "" : " or ") + c;
        return out;
    }
    return {};
}

namespace {

// KEYS: a probe key under the prefix. ARGV: a probe channel, then commands. Each command is
// checked with arguments of its real shape (Redis 7.0 crashes on acl_check_cmd of a keyed
// command given too few arguments): a key first, then fillers that are never keys.
constexpr std::string_view kProbe = R"lua(
local denied = {}
local no_args = {TIME = true, PING = true}
local key_only = {DEL = true, EXISTS = true}
for i = 2, #ARGV do
  local c, ok = ARGV[i], nil
  if c == 'PUBLISH' then ok = redis.acl_check_cmd(c, ARGV[1], 'x')
  elseif c == 'SUBSCRIBE' or c == 'UNSUBSCRIBE' then ok = redis.acl_check_cmd(c, ARGV[1])
  elseif c == 'SELECT' then ok = redis.acl_check_cmd(c, '0')
  elseif c == 'EVAL' or c == 'EVALSHA' then ok = redis.acl_check_cmd(c, 'return 1', '1', KEYS[1])
  elseif no_args[c] then ok = redis.acl_check_cmd(c)
  elseif key_only[c] then ok = redis.acl_check_cmd(c, KEYS[1])
  else ok = redis.acl_check_cmd(c, KEYS[1], '0', '0', '0') end
  if not ok then denied[#denied + 1] = c end
end
return denied
)lua";

}  // namespace

Status check_acl(Server& server, std::string_view user, std::string_view prefix,
                 Clock::time_point deadline) {
    static const Script probe = make_script("acl_probe", std::string(kProbe));
    std::string key = std::string(prefix) + "deadbolt-acl-probe";
    std::string channel = aux_key(key, "released");
    auto commands = acl_commands();
    std::vector<std::string_view> args = {channel};
    args.insert(args.end(), commands.begin(), commands.end());
    Reply r;
    if (Status st = server.eval({&probe, {key}, args}, r, deadline); !st.ok()) return st;
    if (r.elements.empty()) return {};
    std::string missing;
    for (const auto& e : r.elements) {
        std::string c = e.str;
        for (auto& ch : c) ch = static_cast<char>(ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch);
        missing += (c == "publish" || c == "subscribe" || c == "unsubscribe")
                       ? fmt::format(" +{} (or the channel {})", c, channel)
                       : " +" + c;
    }
    return Status::error(errc::permission_denied, fmt::format("the ACL user '{}' lacks{}: {}", user,
                                                              missing, acl_grant_hint()));
}

std::string acl_grant_hint() {
    return "deadbolt needs" + lower_grants() +
           " (+info too for redis-sentinel:// and redlock://, +wait with sync_replicas, "
           "+cluster|slots +asking for redis-cluster://), and the lock keys and channels "
           "(`deadbolt acl --prefix P` prints the ACL SETUSER line)";
}

}  // namespace deadbolt::detail

namespace deadbolt {

std::string acl_setuser_command(std::string_view user, std::string_view prefix) {
    return detail::acl_setuser(user, prefix);
}

}  // namespace deadbolt

// For the CLI, which loads this library only when a command needs Redis (cli/engines.cpp) and
// so looks this up by its C name.
extern "C" void deadbolt_redis_acl_setuser(const char* user, const char* prefix, std::string* out) {
    *out = deadbolt::acl_setuser_command(user, prefix);
}
