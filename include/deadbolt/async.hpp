// The asynchronous API: acquisitions and releases with Asio completion tokens (a callback,
// asio::use_future, asio::use_awaitable, asio::experimental::deferred, ...). The one public
// header with Asio types; the blocking API does not need it.
//
// Every operation runs on the client's event loop, one thread per Client started by the first
// asynchronous call, which keeps any number of acquisitions in flight. The completion handler
// runs on its associated executor (by default: on that loop's thread, so keep it short).
// Cancellation: through the handler's cancellation slot (asio::bind_cancellation_slot,
// awaitable operators, ...) or AcquireOptions::cancel; a cancelled wait completes with
// errc::cancelled. The async forms do not line up behind this process's blocking threads.
#pragma once

#include <asio/associated_cancellation_slot.hpp>
#include <asio/associated_executor.hpp>
#include <asio/async_result.hpp>
#include <asio/dispatch.hpp>
#include <asio/executor_work_guard.hpp>
#include <asio/system_executor.hpp>

#include <functional>
#include <memory>
#include <stop_token>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "deadbolt/client.hpp"
#include "deadbolt/mutex.hpp"

namespace deadbolt {
namespace detail {

using AsyncLeaseDone = std::function<void(std::error_code, Lease)>;

/// What a MutexOptions-and-names acquisition wants, for the starts below.
struct AsyncTarget {
    enum class What : unsigned char { one, all, campaign } what = What::one;
    std::string name{};
    LockMode mode = LockMode::exclusive;
    std::vector<std::string> names{};  // all
    std::string value{};               // campaign
};

/// The target a language binding names by mode: "exclusive", "fair", "shared", "write" (of
/// name), "all" (of names) or "campaign" (name's election, with value). Throws UsageError
/// (invalid_argument) for another mode.
AsyncTarget target_named(std::string_view mode, std::string name, std::vector<std::string> names,
                         std::string value);
/// Starts an acquisition on client's event loop; done runs there once. Never throws.
void start_acquire(const Client& client, const AsyncTarget& target, const MutexOptions& options,
                   const AcquireOptions& how, std::stop_token also, AsyncLeaseDone done) noexcept;
/// Starts releasing lease on its client's event loop; done runs there once. Never throws.
void start_release(Lease lease, AsyncDone done) noexcept;
/// What the reporting starts below hand their callback: the code and the message that the
/// blocking form's exception would carry (empty on success).
using AsyncLeaseReport = std::function<void(std::error_code, std::string, Lease)>;
using AsyncReport = std::function<void(std::error_code, std::string)>;
/// As start_acquire, but done also gets the message naming the problem (for the language
/// bindings, whose errors carry it). Never throws.
void start_acquire_reporting(const Client& client, const AsyncTarget& target,
                             const MutexOptions& options, const AcquireOptions& how,
                             std::stop_token also, AsyncLeaseReport done) noexcept;
/// As start_release, but done also gets the message naming the problem. Never throws.
void start_release_reporting(Lease lease, AsyncReport done) noexcept;

/// The event loop that runs a client's asynchronous operations, as the language bindings use
/// it: they hand it the calls of one turn of their own event loop in one post, and post their
/// results' delivery behind a burst of replies, so each side wakes the other once per batch
/// rather than once per operation. Copyable; empty for an empty client.
class LoopHandle {
  public:
    LoopHandle() = default;
    /// Runs fn on the loop's thread after what is queued there now (starting the loop if it
    /// has not run yet). Never throws: fn is dropped for an empty handle or when out of memory.
    void post(std::function<void()> fn) const noexcept;
    /// True on the loop's own thread.
    bool here() const noexcept;
    bool operator==(const LoopHandle& other) const noexcept { return impl_ == other.impl_; }
    explicit operator bool() const noexcept { return impl_ != nullptr; }

  private:
    friend LoopHandle loop_of(const Client& client) noexcept;
    friend LoopHandle loop_of(Lease& lease) noexcept;
    std::shared_ptr<void> impl_;  // the client's implementation
};
/// Calls queued for event loops, in the order they were queued.
using LoopCalls = std::vector<std::pair<LoopHandle, std::function<void()>>>;
/// Posts calls with one post per loop, each running that loop's calls in their order (a
/// binding's batch of one turn of its own event loop). Never throws.
void post_batched(LoopCalls calls) noexcept;
/// client's event loop. Never throws.
LoopHandle loop_of(const Client& client) noexcept;
/// The event loop of lease's client (lease is unchanged). Never throws.
LoopHandle loop_of(Lease& lease) noexcept;

// Keeps the handler (and its executor busy) until the operation completes, then runs it on
// its associated executor with its cancellation slot cleared.
template <class Handler>
class Completion {
  public:
    explicit Completion(Handler h) : p_(std::make_shared<State>(std::move(h))) {}

    std::stop_token stop_token() const { return p_->stop.get_token(); }

    template <class... Args>
    void operator()(Args... args) const {
        auto p = p_;
        auto ex = p->work.get_executor();
        asio::dispatch(ex, [p, ... args = std::move(args)]() mutable {
            asio::get_associated_cancellation_slot(p->handler).clear();
            std::move(p->handler)(std::move(args)...);
        });
    }

  private:
    using Executor = asio::associated_executor_t<Handler, asio::system_executor>;
    struct State {
        explicit State(Handler h)
            : handler(std::move(h)),
              work(asio::make_work_guard(asio::get_associated_executor(handler))) {
            auto slot = asio::get_associated_cancellation_slot(handler);
            if (slot.is_connected())
                slot.assign([s = stop](asio::cancellation_type) mutable { s.request_stop(); });
        }
        Handler handler;
        asio::executor_work_guard<Executor> work;
        std::stop_source stop;
    };
    std::shared_ptr<State> p_;
};

// The initiations: stateless, so lazy tokens (deferred, use_awaitable) keep copies of the
// arguments, not references to the caller's.
struct InitAcquire {
    template <class Handler>
    void operator()(Handler handler, Client client, AsyncTarget target, MutexOptions options,
                    AcquireOptions how) const {
        Completion<Handler> done(std::move(handler));
        start_acquire(client, std::move(target), options, how, done.stop_token(), done);
    }
};
struct InitRelease {
    template <class Handler>
    void operator()(Handler handler, Lease lease) const {
        Completion<Handler> done(std::move(handler));
        start_release(std::move(lease), done);
    }
};

struct InitLock {
    template <class Handler>
    void operator()(Handler handler, Mutex* m, AcquireOptions how) const {
        Completion<Handler> done(std::move(handler));
        start_lock(*m, how, done.stop_token(), done);
    }
};

}  // namespace detail

/// Takes m's lock as m.lock() does, waiting as how says; completes with (error_code):
/// not_acquired when how's deadline passes, cancelled, the error lock() would throw, or
/// invalid_argument when m holds its lock already. On success m.owns_lock(), and m.unlock()
/// (or m's destructor) releases. m must stay where it is (not moved, not destroyed) until
/// the operation completes. Like every asynchronous form,
/// it does not line up behind this process's blocking threads.
template <class CompletionToken>
auto async_lock(Mutex& m, const AcquireOptions& how, CompletionToken&& token) {
    return asio::async_initiate<CompletionToken, void(std::error_code)>(detail::InitLock{}, token,
                                                                        &m, how);
}

/// async_lock of a FairMutex or MultiLock (or an RWLock's writer), as for a Mutex.
template <class CompletionToken>
auto async_lock(detail::MutexFront& lock, const AcquireOptions& how, CompletionToken&& token) {
    return async_lock(detail::mutex_of(lock), how, std::forward<CompletionToken>(token));
}

/// Acquires name (in mode) as the blocking Client::acquire does; completes with
/// (error_code, Lease): not_acquired when how's deadline passes, cancelled, or the error the
/// blocking form would throw.
template <class CompletionToken>
auto async_acquire(const Client& client, std::string_view name, LockMode mode,
                   const MutexOptions& options, const AcquireOptions& how,
                   CompletionToken&& token) {
    detail::AsyncTarget t;
    t.name = std::string(name);
    t.mode = mode;
    return asio::async_initiate<CompletionToken, void(std::error_code, Lease)>(
        detail::InitAcquire{}, token, client, std::move(t), options, how);
}

/// async_acquire of an exclusive lock (a Mutex's).
template <class CompletionToken>
auto async_acquire(const Client& client, std::string_view name, const MutexOptions& options,
                   const AcquireOptions& how, CompletionToken&& token) {
    return async_acquire(client, name, LockMode::exclusive, options, how,
                         std::forward<CompletionToken>(token));
}

/// Acquires every one of names together (Client::acquire_all); completes with
/// (error_code, Lease).
template <class CompletionToken>
auto async_acquire_all(const Client& client, std::vector<std::string> names,
                       const MutexOptions& options, const AcquireOptions& how,
                       CompletionToken&& token) {
    detail::AsyncTarget t;
    t.what = detail::AsyncTarget::What::all;
    t.names = std::move(names);
    return asio::async_initiate<CompletionToken, void(std::error_code, Lease)>(
        detail::InitAcquire{}, token, client, std::move(t), options, how);
}

/// Campaigns in name's election with value until this client leads (Client::campaign);
/// completes with (error_code, Lease): the term.
template <class CompletionToken>
auto async_campaign(const Client& client, std::string_view name, std::string_view value,
                    const MutexOptions& options, const AcquireOptions& how,
                    CompletionToken&& token) {
    detail::AsyncTarget t;
    t.what = detail::AsyncTarget::What::campaign;
    t.name = std::string(name);
    t.value = std::string(value);
    return asio::async_initiate<CompletionToken, void(std::error_code, Lease)>(
        detail::InitAcquire{}, token, client, std::move(t), options, how);
}

/// Releases lease (taking it: lease is empty afterwards); completes with (error_code):
/// not_owner when it was no longer ours, unknown_outcome when the reply was lost (it is then
/// released in the background). An empty lease completes at once with no error.
template <class CompletionToken>
auto async_release(Lease& lease, CompletionToken&& token) {
    return asio::async_initiate<CompletionToken, void(std::error_code)>(detail::InitRelease{},
                                                                        token, std::move(lease));
}

}  // namespace deadbolt
