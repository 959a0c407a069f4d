// The asynchronous acquire: one operation object per acquisition, stepped by the machine on
// the client's event loop. Every continuation is posted, so a claim that answers at once
// cannot grow the stack, and a stop request reaches the operation on the loop too.
#include "core/async_acquire.hpp"

#include <asio/steady_timer.hpp>

#include <optional>

#include "core/acquire_fsm.hpp"
#include "core/background.hpp"
#include "core/client_impl.hpp"
#include "core/grant.hpp"
#include "core/token.hpp"
#include "core/waiting.hpp"

namespace deadbolt::detail {
namespace {

class Operation : public std::enable_shared_from_this<Operation> {
  public:
    Operation(std::shared_ptr<ClientImpl> c, LockSpec spec, AcquireOptions how, AcquireDone done)
        : client_(std::move(c)),
          loop_(client_->loop()),
          spec_(std::move(spec)),
          how_(std::move(how)),
          done_(std::move(done)),
          timer_(loop_.io()),
          started_(Clock::now()) {}

    // On the loop.
    void start(const std::stop_token& also) {
        if (Status st = admissible(*client_->store, spec_); !st.ok())
            return finish(std::move(st), {});
        if (std::optional<LockSpec> cut; &fitted(*client_->store, spec_, cut) != &spec_)
            spec_ = std::move(*cut);
        claim_ = client_->store->open(spec_, stop_.get_token());
        // Either stop request becomes ours; the callbacks only post, the loop decides.
        auto on_stop = [weak = weak_from_this(), &loop = loop_] {
            if (auto op = weak.lock()) loop.post([op] { op->stopped(); });
        };
        if (how_.cancel.stop_possible()) user_stop_.emplace(how_.cancel, on_stop);
        if (also.stop_possible()) also_stop_.emplace(also, on_stop);
        const MutexOptions& o = spec_.options;
        token_ = spec_.owner.empty() ? random_token() : spec_.owner;
        px_ = o.ttl + o.lock_delay;
        fsm_.emplace(rules_for(*client_, spec_, *claim_, how_, px_), started_);
        step(fsm_->start(Clock::now()));
    }

  private:
    bool stop_requested() const { return how_.cancel.stop_requested() || stop_.stop_requested(); }

    void stopped() {
        stop_.request_stop();  // also cuts a blocking wait short, which then ends it
        if (waiting_ && !blocking_) end_wait();  // the machine sees the stop at its next attempt
    }

    // Runs fn on the loop as a fresh handler, keeping this alive.
    template <class F>
    void then(F&& fn) {
        if (!client_) return;  // finished: a late wake-up has nothing left to do
        loop_.post([self = shared_from_this(), fn = std::forward<F>(fn)]() mutable { fn(*self); });
    }

    void step(Step s) {
        for (;;) {
            if (s.release) cleanup(claim_->holding(token_, px_, 0), *s.release);
            if (s.abandon)
                if (auto w = claim_->waiter(token_, px_)) cleanup(std::move(w), *s.abandon);
            if (s.new_token) token_ = random_token();
            if (s.unsubscribe) claim_->disarm();
            if (s.report && how_.on_wait) how_.on_wait(*s.report);
            if (s.report && s.report->retrying)
                tell_acquire(*client_, spec_, LockEventKind::retrying, a_, started_, refusals_,
                             s.report->retrying);
            switch (s.next) {
                case Next::attempt:
                    if (stop_requested()) {
                        s = fsm_->cancelled(Clock::now());
                        continue;
                    }
                    return attempt();
                case Next::subscribe:
                    return claim_->async_arm(
                        arm_deadline(*client_->store, how_),
                        [self = shared_from_this()](Status st) {
                            self->then([st = std::move(st)](Operation& op) mutable {
                                op.step(op.fsm_->subscribed(std::move(st), Clock::now()));
                            });
                        });
                case Next::wait:
                    return wait(s.until, true);
                case Next::sleep:
                    return wait(s.until, false);
                case Next::confirm:
                    return claim_->async_confirm([self = shared_from_this()](Status st) {
                        self->then([st = std::move(st)](Operation& op) mutable {
                            op.step(op.fsm_->confirmed(std::move(st), Clock::now()));
                        });
                    });
                case Next::granted:
                    return grant(s.until);
                case Next::failed:
                    tell_acquire(*client_, spec_, LockEventKind::gave_up, a_, started_, refusals_,
                                 s.status.ec);
                    return finish(std::move(s.status), {});
            }
        }
    }

    void attempt() {
        a_ = {};
        fences_ = {};
        a_.sent_at = client_->now();
        claim_->async_attempt(token_, px_, a_, fences_, [self = shared_from_this()] {
            self->then([](Operation& op) {
                op.a_.replied_at = op.client_->now();
                tell_attempt(*op.client_, op.spec_, op.a_, op.started_, op.refusals_);
                op.step(op.fsm_->attempted(op.a_, Clock::now()));
            });
        });
    }

    // Until `until`, a wake-up (when armed) or a stop request, whichever comes first.
    void wait(Clock::time_point until, bool armed) {
        if (stop_requested()) return step(fsm_->waited(Clock::now()));
        if (armed && !claim_->wakes_async() && wait_blocking(until)) return;
        waiting_ = true;
        ++wait_id_;
        if (armed)
            claim_->async_wait([self = shared_from_this(), id = wait_id_] {
                self->then([id](Operation& op) {
                    if (op.waiting_ && op.wait_id_ == id) op.end_wait();
                });
            });
        timer_.expires_at(until);
        timer_.async_wait([self = shared_from_this(), id = wait_id_](const std::error_code& ec) {
            if (!ec && self->waiting_ && self->wait_id_ == id) self->end_wait();
        });
    }

    // The claim's own blocking wait, on a thread of its own (a database waits inside the
    // server, ZooKeeper on its watch): the loop leaves the claim alone until it returns. False
    // when no thread could start (the caller then looks again at until, as a sleep would).
    bool wait_blocking(Clock::time_point until) {
        waiting_ = blocking_ = true;
        ++wait_id_;  // a timer's late callback is not this wait's
        try {
            // Adopted rather than detached (core/background.hpp): the process may exit while
            // it still returns.
            Background adopted([self = shared_from_this(), until]() mutable {
                Status failed;
                try {
                    self->claim_->wait(until);
                } catch (const std::system_error& ex) {  // deadbolt's, with their code
                    failed = {ex.code(), ex.what()};
                } catch (const std::exception& ex) {
                    failed = Status::error(errc::server_error, ex.what());
                }
                // The loop gets our only reference, so the operation ends there, never here.
                EventLoop& loop = self->loop_;
                loop.post([op = std::move(self), failed = std::move(failed)]() mutable {
                    op->blocking_ = false;
                    if (!op->client_) return;
                    if (!failed.ok()) return op->finish(std::move(failed), {});
                    if (op->waiting_) op->end_wait();
                });
            });
            return true;
        } catch (const std::exception&) {
            waiting_ = blocking_ = false;
            return false;
        }
    }

    void end_wait() {
        waiting_ = false;
        claim_->cancel_wait();
        timer_.cancel();
        step(fsm_->waited(Clock::now()));
    }

    void cleanup(std::shared_ptr<Holding> h, const Step::Cleanup& when) {
        if (!when.now) {
            if (!when.once) client_->renewer->add_cleanup(std::move(h), when.give_up);
            return;
        }
        std::shared_ptr<const Holding> held = std::move(h);
        client_->store->async_release(held, client_->store->deadline(),
                                      [weak = std::weak_ptr<ClientImpl>(client_), held,
                                       give_up = when.give_up, once = when.once](const Verdict& v) {
                                          if (v.is != Verdict::Is::unknown || once) return;
                                          if (auto c = weak.lock())
                                              c->renewer->add_cleanup(held, give_up);
                                      });
    }

    void grant(Clock::time_point valid_until) {
        // Asynchronous acquisitions do not line up in the local queue.
        auto s = make_state(client_, spec_, *claim_, token_, std::move(fences_), px_, a_.sent_at,
                            valid_until, false);
        tell_acquire(*client_, spec_, LockEventKind::granted, a_, started_, refusals_, {},
                     s->fence);
        client_->renewer->add(s);
        finish({}, make_lease(std::move(s)));
    }

    void finish(Status st, Lease l) {
        user_stop_.reset();
        also_stop_.reset();
        if (claim_) claim_->disarm();
        auto done = std::move(done_);
        // Our hold on the client goes before the caller hears: a caller that then drops its
        // last handle joins the loop, rather than leave the loop to drop the client after
        // the caller's main has returned.
        client_.reset();
        done(std::move(st), std::move(l));
    }

    using StopCallback = std::stop_callback<std::function<void()>>;
    std::shared_ptr<ClientImpl> client_;
    EventLoop& loop_;
    LockSpec spec_;
    AcquireOptions how_;
    AcquireDone done_;
    asio::steady_timer timer_;
    Clock::time_point started_;
    std::uint32_t refusals_ = 0;  // the acquisition's so far (LockEvent::refusals)
    std::stop_source stop_;
    std::optional<StopCallback> user_stop_, also_stop_;
    std::unique_ptr<Claim> claim_;
    std::optional<AcquireFsm> fsm_;
    std::string token_;
    std::chrono::milliseconds px_{0};
    Attempted a_;
    Fences fences_;
    bool waiting_ = false;
    bool blocking_ = false;  // wait_blocking's thread has the claim
    unsigned wait_id_ = 0;
};

}  // namespace

void async_acquire(std::shared_ptr<ClientImpl> client, LockSpec spec, AcquireOptions how,
                   std::stop_token also, AcquireDone done) noexcept {
    try {
        auto& loop = client->loop();
        auto op = std::make_shared<Operation>(std::move(client), std::move(spec), std::move(how),
                                              std::move(done));
        loop.post([op, also = std::move(also)] { op->start(also); });
    } catch (const std::exception& ex) {
        if (done) done(Status::error(errc::server_error, ex.what()), {});
    }
}

void async_release(Lease lease, std::function<void(Status)> done) noexcept {
    auto s = take_state(lease);
    auto then = std::move(done);
    if (!s) return then({});
    try {
        auto& loop = s->client->loop();
        if (s->released.exchange(true)) return loop.post([then] { then({}); });
        s->client->renewer->remove(s.get());
        auto started = Clock::now();
        loop.post([s, then, started] {
            Store& store = *s->client->store;
            store.async_release(
                s->holding, store.deadline_for(s->options.ttl),
                [s, then, started](Verdict v) mutable {
                    auto st = s->released_as(std::move(v), started);
                    s.reset();  // before the caller hears, as an acquisition's end does
                    then(std::move(st));
                });
        });
    } catch (const std::exception& ex) {
        then(Status::error(errc::server_error, ex.what()));
    }
}

}  // namespace deadbolt::detail
