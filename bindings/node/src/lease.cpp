#include "lease.hpp"

#include "deadbolt/async.hpp"
#include "offload.hpp"

namespace deadbolt::node {

namespace {

// A second Lease on l's holding, for an asynchronous release: l still shows the holding (its
// name, fence, lost) after the release, which marks the shared state released.
Lease sharing(Lease& l) {
    auto state = detail::take_state(l);
    l = detail::make_lease(state);
    return detail::make_lease(std::move(state));
}

// The holding, shared with a call on another thread; it never releases, and keeps the JS
// object's lease from being released (when JS lets go of it meanwhile) until the call is
// over: a release beside an extend() would make it report a loss nobody had.
struct Borrowed {
    explicit Borrowed(const std::shared_ptr<Granted>& of) : keep(of), l(sharing(of->lease)) {}
    Borrowed(const Borrowed&) = delete;
    Borrowed& operator=(const Borrowed&) = delete;
    ~Borrowed() { detail::take_state(l); }
    std::shared_ptr<Granted> keep;
    Lease l;
};

}  // namespace

Granted::~Granted() {
    if (lease.held()) detail::start_release(std::move(lease), [](std::error_code) {});
}

JsLease::JsLease(const Napi::CallbackInfo& info) : Napi::ObjectWrap<JsLease>(info) {}

Napi::Object JsLease::make(Napi::Env env, Lease l) {
    auto o = Addon::of(env).lease_class.New({});
    Unwrap(o)->own_->lease = std::move(l);
    return o;
}

Napi::Value JsLease::name(const Napi::CallbackInfo& info) {
    return js_name(info.Env(), own_->lease.name());
}
Napi::Value JsLease::token(const Napi::CallbackInfo& info) {
    return Napi::String::New(info.Env(), own_->lease.token());
}
Napi::Value JsLease::fence(const Napi::CallbackInfo& info) {
    return Napi::Number::New(info.Env(), static_cast<double>(own_->lease.fence()));
}
Napi::Value JsLease::fences(const Napi::CallbackInfo& info) {
    auto env = info.Env();
    auto all = own_->lease.fences();
    auto out = Napi::Array::New(env, all.size());
    for (std::uint32_t i = 0; i < all.size(); ++i) {
        auto f = Napi::Object::New(env);
        f.Set("name", js_name(env, all[i].name));
        f.Set("fence", Napi::Number::New(env, static_cast<double>(all[i].fence)));
        out.Set(i, f);
    }
    return out;
}
Napi::Value JsLease::remaining(const Napi::CallbackInfo& info) {
    if (!own_->lease) return Napi::Number::New(info.Env(), 0);
    std::chrono::duration<double, std::milli> left =
        own_->lease.valid_until() - Lease::clock::now();
    return Napi::Number::New(info.Env(), left.count());
}
Napi::Value JsLease::valid(const Napi::CallbackInfo& info) {
    return Napi::Boolean::New(info.Env(), own_->lease.valid());
}
Napi::Value JsLease::lost(const Napi::CallbackInfo& info) {
    return Napi::Boolean::New(info.Env(), own_->lease.lost());
}
Napi::Value JsLease::held(const Napi::CallbackInfo& info) {
    return Napi::Boolean::New(info.Env(), own_->lease.held());
}

Napi::Value JsLease::release(const Napi::CallbackInfo& info) {
    auto env = info.Env();
    auto channel = Addon::of(env).channel;
    auto promise = Napi::Promise::Deferred::New(env);
    if (!own_->lease.held()) {
        promise.Resolve(env.Undefined());
        return promise.Promise();
    }
    channel->keep(env);
    auto loop = detail::loop_of(own_->lease);
    auto done = [channel, promise, loop](std::error_code ec, const std::string& why) {
        channel->deliver(loop, [channel, promise, ec, why](Napi::Env env) {
            channel->let_go(env);
            settle(env, promise, [&]() -> Napi::Value {
                if (ec) throw Napi::Error(env, error_of(env, ec, why));
                return env.Undefined();
            });
        });
    };
    channel->send(loop, [lease = std::make_shared<Granted>(sharing(own_->lease)), done] {
        detail::start_release_reporting(std::move(lease->lease), done);
    });
    return promise.Promise();
}

Napi::Value JsLease::extend(const Napi::CallbackInfo& info) {
    auto ttl = ms_of(info[0], "ttl");
    auto b = std::make_shared<Borrowed>(own_);
    return offload(
        info.Env(),
        [b, ttl] {
            b->l.extend(ttl);
            return Done{};
        },
        [](Napi::Env e, Done) { return e.Undefined(); });
}

Napi::Value JsLease::is_current(const Napi::CallbackInfo& info) {
    auto b = std::make_shared<Borrowed>(own_);
    return offload(
        info.Env(), [b] { return b->l.is_current(); },
        [](Napi::Env e, bool current) { return Napi::Boolean::New(e, current); });
}

Napi::Value JsLease::put_if_current(const Napi::CallbackInfo& info) {
    auto key = name_of(info[0], "key");
    auto value = name_of(info[1], "value");
    auto b = std::make_shared<Borrowed>(own_);
    return offload(
        info.Env(), [b, key, value] { return b->l.put_if_current(key, value); },
        [](Napi::Env e, bool put) { return Napi::Boolean::New(e, put); });
}

Napi::Function JsLease::define(Napi::Env env) {
    return DefineClass(
        env, "NativeLease",
        {InstanceAccessor<&JsLease::name>("name"), InstanceAccessor<&JsLease::token>("token"),
         InstanceAccessor<&JsLease::fence>("fence"), InstanceAccessor<&JsLease::fences>("fences"),
         InstanceAccessor<&JsLease::remaining>("remaining"),
         InstanceAccessor<&JsLease::valid>("valid"), InstanceAccessor<&JsLease::lost>("lost"),
         InstanceAccessor<&JsLease::held>("held"), InstanceMethod<&JsLease::release>("release"),
         InstanceMethod<&JsLease::extend>("extend"),
         InstanceMethod<&JsLease::is_current>("isCurrent"),
         InstanceMethod<&JsLease::put_if_current>("putIfCurrent")});
}

void define_lease(Napi::Env env, Napi::Object exports) {
    auto cls = JsLease::define(env);
    Addon::of(env).lease_class = Napi::Persistent(cls);
    exports.Set("NativeLease", cls);
}

}  // namespace deadbolt::node
