// The native Client (connect, the client's calls) and Request (one lock's acquisitions,
// started on deadbolt's event loop and settled on the JS thread: waiting never blocks it).
#include "cancels.hpp"
#include "deadbolt/async.hpp"
#include "deadbolt/deadbolt.hpp"
#include "lease.hpp"
#include "loader/engine_loader.hpp"
#include "offload.hpp"
#include "options.hpp"

namespace deadbolt::node {

namespace {

// What to acquire: detail::target_named's modes; names (an array) for "all", else a name.
detail::AsyncTarget target_of(const Napi::Value& name, const std::string& mode,
                              const Napi::Value& value) {
    if (mode == "all") {
        if (!name.IsArray()) refuse(name.Env(), "names must be an array");
        auto a = name.As<Napi::Array>();
        std::vector<std::string> names;
        for (std::uint32_t i = 0; i < a.Length(); ++i) names.push_back(name_of(a[i], "a name"));
        return detail::target_named(mode, {}, std::move(names), {});
    }
    return detail::target_named(mode, name_of(name, "name"), {},
                                mode == "campaign" ? name_of(value, "value") : std::string());
}

double ms(std::chrono::milliseconds d) {
    return static_cast<double>(d.count());
}

Napi::Object status_object(Napi::Env env, const LockStatus& s) {
    auto holders = Napi::Array::New(env, s.held_by.size());
    for (std::uint32_t i = 0; i < s.held_by.size(); ++i) {
        const auto& h = s.held_by[i];
        auto o = Napi::Object::New(env);
        o.Set("host", h.host);
        o.Set("pid", h.pid);
        o.Set("ttl", ms(h.ttl));
        o.Set("client", h.client);
        if (h.since)
            o.Set("since",
                  Napi::Date::New(env, ms(std::chrono::duration_cast<std::chrono::milliseconds>(
                                           h.since->time_since_epoch()))));
        holders.Set(i, o);
    }
    auto o = Napi::Object::New(env);
    o.Set("held", s.held);
    o.Set("ttl", ms(s.ttl));
    o.Set("lastFence", static_cast<double>(s.last_fence));
    o.Set("kind", s.kind);
    o.Set("holders", s.holders);
    o.Set("waiters", s.waiters);
    o.Set("permits", s.permits);
    o.Set("writerWaiting", s.writer_waiting);
    o.Set("heldBy", holders);
    o.Set("value", s.value);
    o.Set("sessionTimeout", ms(s.session_timeout));
    return o;
}

Napi::Object fenced_object(Napi::Env env, const FencedResult& r) {
    auto o = Napi::Object::New(env);
    o.Set("accepted", r.accepted);
    o.Set("highest", static_cast<double>(r.highest));
    o.Set("version", static_cast<double>(r.version));
    o.Set("staleFence", r.stale_fence);
    return o;
}

std::uint64_t u64_of(const Napi::Value& v, const char* what) {
    if (v.IsBigInt()) {
        bool lossless = true;
        auto x = v.As<Napi::BigInt>().Uint64Value(&lossless);
        if (lossless) return x;
    } else if (v.IsNumber()) {
        double d = v.As<Napi::Number>().DoubleValue();
        if (d >= 0 && d <= 9007199254740991.0 &&
            d == static_cast<double>(static_cast<std::uint64_t>(d)))
            return static_cast<std::uint64_t>(d);
    }
    refuse(v.Env(), std::string(what) + " must be a whole number from 0 to 2^53 (or a BigInt)");
}

// One lock's request, parsed once (bad options are refused when the lock is made) and used by
// every acquisition of it.
class JsRequest : public Napi::ObjectWrap<JsRequest> {
  public:
    explicit JsRequest(const Napi::CallbackInfo& info)
        : Napi::ObjectWrap<JsRequest>(info), cancels_(Addon::of(info.Env()).cancels) {}

    void set(Client c, detail::AsyncTarget t, MutexOptions o) {
        loop_ = detail::loop_of(c);
        spec_ = std::make_shared<const Spec>(Spec{std::move(c), std::move(t), std::move(o)});
    }

    // acquire(timeoutMs | undefined, cancelId): a promise of a NativeLease; cancelId > 0 lets
    // cancel(cancelId) end the wait (it then rejects with CancelledError).
    Napi::Value acquire(const Napi::CallbackInfo& info) {
        auto env = info.Env();
        return guarded(env, [&]() -> Napi::Value {
            AcquireOptions how;
            how.deadline = deadline_of(info[0]);
            auto id = info[1].IsNumber() ? info[1].As<Napi::Number>().Uint32Value() : 0U;
            auto token = cancels_->open(id);
            auto channel = Addon::of(env).channel;
            auto promise = Napi::Promise::Deferred::New(env);
            channel->keep(env);
            auto done = [channel, promise, id, cancels = cancels_, loop = loop_](
                            std::error_code ec, const std::string& why, Lease l) {
                auto lease = std::make_shared<Granted>(std::move(l));
                channel->deliver(loop,
                                 [channel, promise, id, cancels, ec, why, lease](Napi::Env env) {
                                     channel->let_go(env);
                                     cancels->close(id);
                                     settle(env, promise, [&]() -> Napi::Value {
                                         if (ec) throw Napi::Error(env, error_of(env, ec, why));
                                         return JsLease::make(env, std::move(lease->lease));
                                     });
                                 });
            };
            channel->send(loop_, [spec = spec_, how, token, done] {
                detail::start_acquire_reporting(spec->client, spec->target, spec->options, how,
                                                token, done);
            });
            return promise.Promise();
        });
    }

    Napi::Value cancel(const Napi::CallbackInfo& info) {
        cancels_->cancel(info[0].As<Napi::Number>().Uint32Value());
        return info.Env().Undefined();
    }

    static Napi::Function define(Napi::Env env) {
        return DefineClass(env, "NativeRequest",
                           {InstanceMethod<&JsRequest::acquire>("acquire"),
                            InstanceMethod<&JsRequest::cancel>("cancel")});
    }

  private:
    struct Spec {
        Client client;
        detail::AsyncTarget target;
        MutexOptions options;
    };
    std::shared_ptr<const Spec> spec_;  // shared with the starts on the client's loop
    detail::LoopHandle loop_;
    std::shared_ptr<Cancels> cancels_;  // the environment's (Addon::cancels)
};

}  // namespace

namespace {

// The native Client: a connection to one engine (the C++ Client, shared by its leases).
class JsClient : public Napi::ObjectWrap<JsClient> {
  public:
    explicit JsClient(const Napi::CallbackInfo& info) : Napi::ObjectWrap<JsClient>(info) {}

    // connect(url, options): a promise of a NativeClient.
    static Napi::Value connect(const Napi::CallbackInfo& info) {
        auto env = info.Env();
        return guarded(env, [&]() -> Napi::Value {
            auto url = name_of(info[0], "url");
            auto options = client_options(info[1]);
            return offload(
                env,
                [url, options] {
                    detail::load_engine_for(url);  // the engine's library, at first use
                    return std::make_shared<Client>(Client::connect(url, options));
                },
                [](Napi::Env e, const std::shared_ptr<Client>& c) {
                    auto o = Addon::of(e).client_class.New({});
                    Unwrap(o)->client_.emplace(*c);
                    return o;
                });
        });
    }

    static Napi::Value url_forms(const Napi::CallbackInfo& info) {
        auto forms = guarded(info.Env(), [] {
            detail::load_all_engines();
            return Client::url_forms();
        });
        auto a = Napi::Array::New(info.Env(), forms.size());
        for (std::uint32_t i = 0; i < forms.size(); ++i) a.Set(i, forms[i]);
        return a;
    }

    // request(name | names, mode, options, requestId, value): a NativeRequest.
    Napi::Value request(const Napi::CallbackInfo& info) {
        auto env = info.Env();
        return guarded(env, [&]() -> Napi::Value {
            auto target = target_of(info[0], info[1].As<Napi::String>().Utf8Value(), info[4]);
            auto options = mutex_options(info[2], info[3].As<Napi::Number>().Uint32Value());
            auto o = Addon::of(env).request_class.New({});
            JsRequest::Unwrap(o)->set(client(), std::move(target), std::move(options));
            return o;
        });
    }

    Napi::Value status(const Napi::CallbackInfo& info) {
        auto name = name_of(info[0], "name");
        return offload(
            info.Env(), [c = client(), name] { return c.status(name); }, status_object);
    }

    Napi::Value list(const Napi::CallbackInfo& info) {
        auto pattern = info[0].IsUndefined() ? std::string("*") : name_of(info[0], "pattern");
        bool foreign = info[1].ToBoolean().Value();
        return offload(
            info.Env(), [c = client(), pattern, foreign] { return c.list(pattern, foreign); },
            [](Napi::Env e, const std::vector<ListedLock>& locks) {
                auto a = Napi::Array::New(e, locks.size());
                for (std::uint32_t i = 0; i < locks.size(); ++i) {
                    auto o = Napi::Object::New(e);
                    o.Set("name", js_name(e, locks[i].name));
                    o.Set("status", status_object(e, locks[i].status));
                    a.Set(i, o);
                }
                return a;
            });
    }

    Napi::Value force_unlock(const Napi::CallbackInfo& info) {
        auto name = name_of(info[0], "name");
        return offload(
            info.Env(), [c = client(), name] { return c.force_unlock(name); },
            [](Napi::Env e, const std::string& what) { return Napi::String::New(e, what); });
    }

    Napi::Value fenced_set(const Napi::CallbackInfo& info) {
        auto env = info.Env();
        return guarded(env, [&]() -> Napi::Value {
            auto key = name_of(info[0], "key");
            auto value = name_of(info[1], "value");
            auto fence = u64_of(info[2], "fence");
            return offload(
                env, [c = client(), key, value, fence] { return c.fenced_set(key, value, fence); },
                fenced_object);
        });
    }

    Napi::Value fenced_cas(const Napi::CallbackInfo& info) {
        auto env = info.Env();
        return guarded(env, [&]() -> Napi::Value {
            auto key = name_of(info[0], "key");
            auto value = name_of(info[1], "value");
            auto fence = u64_of(info[2], "fence");
            auto version = u64_of(info[3], "version");
            return offload(
                env,
                [c = client(), key, value, fence, version] {
                    return c.fenced_cas(key, value, fence, version);
                },
                fenced_object);
        });
    }

    Napi::Value fenced_get(const Napi::CallbackInfo& info) {
        auto key = name_of(info[0], "key");
        return offload(
            info.Env(), [c = client(), key] { return c.fenced_get(key); },
            [](Napi::Env e, const FencedValue& v) {
                auto o = Napi::Object::New(e);
                o.Set("value", v.value
                                   ? Napi::Buffer<char>::Copy(e, v.value->data(), v.value->size())
                                         .As<Napi::Value>()
                                   : e.Null());
                o.Set("version", static_cast<double>(v.version));
                return o;
            });
    }

    Napi::Value ping(const Napi::CallbackInfo& info) {
        return offload(
            info.Env(),
            [c = client()] {
                c.ping();
                return Done{};
            },
            [](Napi::Env e, Done) { return e.Undefined(); });
    }

    Napi::Value lock_key(const Napi::CallbackInfo& info) {
        auto env = info.Env();
        return guarded(env, [&]() -> Napi::Value {
            auto k = client().lock_key(name_of(info[0], "name"));
            return Napi::Buffer<char>::Copy(env, k.data(), k.size());
        });
    }

    Napi::Value warnings(const Napi::CallbackInfo& info) {
        const auto& w = client().warnings();
        auto a = Napi::Array::New(info.Env(), w.size());
        for (std::uint32_t i = 0; i < w.size(); ++i) a.Set(i, w[i]);
        return a;
    }

    // The C++ client; a NativeClient made from JS (not by connect) has none.
    const Client& client() const {
        if (!client_) throw Napi::Error::New(Env(), "a NativeClient comes from connect() only");
        return *client_;
    }

    static Napi::Function define(Napi::Env env) {
        return DefineClass(
            env, "NativeClient",
            {StaticMethod<&JsClient::connect>("connect"),
             StaticMethod<&JsClient::url_forms>("urlForms"),
             InstanceMethod<&JsClient::request>("request"),
             InstanceMethod<&JsClient::status>("status"), InstanceMethod<&JsClient::list>("list"),
             InstanceMethod<&JsClient::force_unlock>("forceUnlock"),
             InstanceMethod<&JsClient::fenced_set>("fencedSet"),
             InstanceMethod<&JsClient::fenced_cas>("fencedCas"),
             InstanceMethod<&JsClient::fenced_get>("fencedGet"),
             InstanceMethod<&JsClient::ping>("ping"),
             InstanceMethod<&JsClient::lock_key>("lockKey"),
             InstanceMethod<&JsClient::warnings>("warnings")});
    }

  private:
    std::optional<Client> client_;
};

}  // namespace

const Client& client_of(const Napi::Value& v) {
    if (!v.IsObject() || !v.As<Napi::Object>().InstanceOf(Addon::of(v.Env()).client_class.Value()))
        refuse(v.Env(), "not a deadbolt client");
    return JsClient::Unwrap(v.As<Napi::Object>())->client();
}

void define_client(Napi::Env env, Napi::Object exports) {
    auto& a = Addon::of(env);
    auto request = JsRequest::define(env);
    a.request_class = Napi::Persistent(request);
    auto client = JsClient::define(env);
    a.client_class = Napi::Persistent(client);
    exports.Set("NativeClient", client);
}

}  // namespace deadbolt::node
