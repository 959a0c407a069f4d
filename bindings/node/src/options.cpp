#include "options.hpp"

#include <string>
#include <vector>

namespace deadbolt::node {

namespace {

// Reads o's own keys through set(key, value), refusing a key not in known.
template <class Set>
void each_option(const Napi::Value& v, const std::vector<std::string>& known, Set set) {
    if (v.IsUndefined() || v.IsNull()) return;
    if (!v.IsObject() || v.IsArray()) refuse(v.Env(), "options must be an object");
    auto o = v.As<Napi::Object>();
    auto keys = o.GetPropertyNames();
    for (std::uint32_t i = 0; i < keys.Length(); ++i) {
        auto key = keys.Get(i).ToString().Utf8Value();
        bool ok = false;
        for (const auto& n : known) ok = ok || n == key;
        if (!ok) {
            std::string what = "unknown option '" + key + "' (the options are: ";
            for (const auto& n : known) what += (&n == known.data() ? "" : ", ") + n;
            refuse(v.Env(), what + ")");
        }
        auto value = o.Get(key);
        if (!value.IsUndefined()) set(key, value);
    }
}

std::string text(const Napi::Value& v, const std::string& key) {
    if (!v.IsString()) refuse(v.Env(), "option '" + key + "' must be a string");
    return v.As<Napi::String>().Utf8Value();
}

bool flag(const Napi::Value& v, const std::string& key) {
    if (!v.IsBoolean()) refuse(v.Env(), "option '" + key + "' must be true or false");
    return v.As<Napi::Boolean>().Value();
}

}  // namespace

ClientOptions client_options(const Napi::Value& v) {
    ClientOptions o;
    each_option(
        v,
        {"connectTimeout", "commandTimeout", "keyPrefix", "username", "password", "keepalive",
         "tlsCaFile", "tlsCertFile", "tlsKeyFile", "tlsSni", "tlsVerify", "loopSpin"},
        [&](const std::string& k, const Napi::Value& x) {
            const char* what = k.c_str();
            if (k == "connectTimeout") o.connect_timeout = ms_of(x, what);
            if (k == "commandTimeout") o.command_timeout = ms_of(x, what);
            if (k == "keyPrefix") o.key_prefix = text(x, k);
            if (k == "username") o.username = text(x, k);
            if (k == "password") o.password = text(x, k);
            if (k == "keepalive") o.keepalive = flag(x, k);
            if (k == "tlsCaFile") o.tls.ca_file = text(x, k);
            if (k == "tlsCertFile") o.tls.cert_file = text(x, k);
            if (k == "tlsKeyFile") o.tls.key_file = text(x, k);
            if (k == "tlsSni") o.tls.sni = text(x, k);
            if (k == "tlsVerify") o.tls.verify = flag(x, k);
            if (k == "loopSpin") {  // milliseconds, in microseconds' grain
                ms_of(x, what);     // refuses what every time is refused for
                o.loop_spin = std::chrono::microseconds(
                    static_cast<long long>(x.As<Napi::Number>().DoubleValue() * 1000));
            }
        });
    return o;
}

MutexOptions mutex_options(const Napi::Value& v, std::uint32_t request) {
    MutexOptions o;
    each_option(v,
                {"ttl", "autoRenew", "renewEvery", "maxHold", "lockDelay", "waitJitter",
                 "handoffGrace", "waiterTtl", "onLost"},
                [&](const std::string& k, const Napi::Value& x) {
                    const char* what = k.c_str();
                    if (k == "ttl") o.ttl = ms_of(x, what);
                    if (k == "autoRenew") o.auto_renew = flag(x, k);
                    if (k == "renewEvery") o.renew_every = ms_of(x, what);
                    if (k == "maxHold") o.max_hold = ms_of(x, what);
                    if (k == "lockDelay") o.lock_delay = ms_of(x, what);
                    if (k == "waitJitter") o.wait_jitter = ms_of(x, what);
                    if (k == "handoffGrace") o.handoff_grace = ms_of(x, what);
                    if (k == "waiterTtl") o.waiter_ttl = ms_of(x, what);
                    if (k == "onLost" && !x.IsFunction() && !x.IsNull())
                        refuse(x.Env(), "option 'onLost' must be a function");
                });
    // The package keeps the JS callbacks (onLost, each lease's signal); this tells it which
    // request's lease went.
    auto channel = Addon::of(v.Env()).channel;
    o.on_lost = [channel, request](std::string_view name, std::error_code why) {
        channel->post([request, n = std::string(name), why](Napi::Env env) {
            Addon::of(env).lost.Call(
                {Napi::Number::New(env, request), js_name(env, n), lost_error(env, n, why)});
        });
    };
    return o;
}

}  // namespace deadbolt::node
