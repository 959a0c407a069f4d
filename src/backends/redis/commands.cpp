#include "backends/redis/commands.hpp"

namespace deadbolt::detail {

bool is_noscript(const Reply& r) {
    return r.is_error() && r.str.rfind("NOSCRIPT", 0) == 0;
}

ScriptCall OwnedCall::view() const {
    return {script,
            {keys.begin(), keys.end()},
            {args.begin(), args.end()},
            {fallback_keys.begin(), fallback_keys.end()}};
}

OwnedCall owned(const ScriptCall& call) {
    return {call.script,
            {call.keys.begin(), call.keys.end()},
            {call.args.begin(), call.args.end()},
            {call.fallback_keys.begin(), call.fallback_keys.end()}};
}

std::string encode_calls(std::span<const ScriptCall> calls) {
    std::string out;
    for (const auto& call : calls) encode_evalsha(out, *call.script, call.keys, call.args);
    return out;
}

OwnedCall lease_call(const Script& script, const std::vector<std::string>& op_keys,
                     const std::string& token, const std::string& channel,
                     std::chrono::milliseconds px, const std::vector<std::string>& op_args) {
    OwnedCall c{&script, op_keys, {token, channel, std::to_string(px.count())}};
    c.args.insert(c.args.end(), op_args.begin(), op_args.end());
    return c;
}

namespace {

// Calls that hit NOSCRIPT (after SCRIPT FLUSH or a restart) are re-sent once with EVAL, which
// also caches the script, so the next EVALSHA hits again.
Status reload_missing(Connection& c, std::span<const ScriptCall> calls, std::vector<Reply>& replies,
                      Clock::time_point deadline) {
    std::vector<std::size_t> missing;
    for (std::size_t i = 0; i < replies.size(); ++i)
        if (is_noscript(replies[i])) missing.push_back(i);
    if (missing.empty()) return {};
    std::string retry;
    for (auto i : missing) encode_eval(retry, *calls[i].script, calls[i].keys, calls[i].args);
    std::vector<Reply> again;
    if (Status st = c.exec(std::move(retry), missing.size(), again, deadline); !st.ok()) return st;
    for (std::size_t k = 0; k < missing.size(); ++k) replies[missing[k]] = std::move(again[k]);
    return {};
}

}  // namespace

Status eval_many(Connection& c, std::span<const ScriptCall> calls, std::vector<Reply>& replies,
                 Clock::time_point deadline) {
    if (Status st = c.exec(encode_calls(calls), calls.size(), replies, deadline); !st.ok())
        return st;
    return reload_missing(c, calls, replies, deadline);
}

Status eval(Connection& c, const ScriptCall& call, Reply& reply, Clock::time_point deadline) {
    std::vector<Reply> replies;
    if (Status st = eval_many(c, {&call, 1}, replies, deadline); !st.ok()) return st;
    reply = std::move(replies.front());
    if (reply.is_error()) return from_server_error(reply.str);
    return {};
}

Status pipeline(Connection& c, const std::vector<std::vector<std::string_view>>& cmds,
                std::vector<Reply>& replies, Clock::time_point deadline) {
    std::string out;
    for (const auto& argv : cmds) encode_command(out, argv);
    if (Status st = c.exec(std::move(out), cmds.size(), replies, deadline); !st.ok()) return st;
    for (const auto& r : replies)
        if (r.is_error()) return from_server_error(r.str);
    return {};
}

Status command(Connection& c, const std::vector<std::string_view>& argv, Reply& reply,
               Clock::time_point deadline) {
    std::vector<Reply> replies;
    Status st = pipeline(c, {argv}, replies, deadline);
    if (!replies.empty()) reply = std::move(replies.front());
    return st;
}

}  // namespace deadbolt::detail
