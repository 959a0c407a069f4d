#include "backends/redis/net/async_connection.hpp"

#include <fmt/format.h>

#include <algorithm>

#include <asio/write.hpp>

namespace deadbolt::detail {

AsyncConnection::AsyncConnection(EventLoop& loop, Endpoint ep)
    : keepalive_(loop.keepalive()),
      ep_(std::move(ep)),
      transport_(loop.io()),
      timer_(loop.io()),
      rbuf_(std::size_t{64} * 1024) {}

void AsyncConnection::exec(std::string encoded, std::size_t count, Clock::time_point deadline,
                           Done done) {
    if (closed_) {
        // For good: a session opened now would outlive the loop's last turn.
        asio::post(timer_.get_executor(), [done = std::move(done)] {
            done(Status::error(errc::connection_lost, "the client is closing"), {});
        });
        return;
    }
    queued_.push_back({std::move(encoded), count, {}, deadline, std::move(done)});
    if (connected_) return flush_soon();
    if (!connecting_) connect();
    arm_timer();  // while the session opens, this request's deadline is watched too
}

bool AsyncConnection::first_on_session(const Script& s) {
    if (std::find(sent_whole_.begin(), sent_whole_.end(), &s) != sent_whole_.end()) return false;
    sent_whole_.push_back(&s);
    return true;
}

void AsyncConnection::eval_many(Calls calls, std::string encoded, Clock::time_point deadline,
                                Done done) {
    const std::size_t n = calls->size();
    std::vector<bool> whole(n);
    bool any = false;
    for (std::size_t i = 0; i < n; ++i) {
        whole[i] = first_on_session(*(*calls)[i].script);
        any = any || whole[i];
    }
    if (any) {
        // Rare (a session's first calls): encoded again, each script's first call as EVAL.
        encoded.clear();
        for (std::size_t i = 0; i < n; ++i) {
            ScriptCall v = (*calls)[i].view();
            (whole[i] ? encode_eval : encode_evalsha)(encoded, *v.script, v.keys, v.args);
        }
    }
    exec(std::move(encoded), n, deadline,
         [self = shared_from_this(), calls = std::move(calls), deadline, done = std::move(done)](
             Status st, std::vector<Reply> r) mutable {
             std::vector<std::size_t> missing;
             for (std::size_t i = 0; st.ok() && i < r.size(); ++i)
                 if (is_noscript(r[i])) missing.push_back(i);
             if (missing.empty()) return done(std::move(st), std::move(r));
             // After SCRIPT FLUSH or a restart: EVAL runs each and caches it again. Only then
             // is a script's whole source encoded.
             std::string retry;
             for (auto i : missing) {
                 ScriptCall view = (*calls)[i].view();
                 encode_eval(retry, *view.script, view.keys, view.args);
             }
             const std::size_t k = missing.size();
             self->exec(std::move(retry), k, deadline,
                        [r = std::move(r), missing = std::move(missing), done = std::move(done)](
                            Status st2, std::vector<Reply> again) mutable {
                            if (!st2.ok()) return done(std::move(st2), {});
                            for (std::size_t j = 0; j < missing.size(); ++j)
                                r[missing[j]] = std::move(again[j]);
                            done({}, std::move(r));
                        });
         });
}

void AsyncConnection::eval(const ScriptCall& call, Clock::time_point deadline,
                           std::function<void(Status, Reply)> done) {
    // The hot path: NOSCRIPT comes only after SCRIPT FLUSH or a restart, so what it needs is
    // made from the request's bytes then, rather than from a copy of every key and argument
    // made for each request (a tenth of the asynchronous cycle's allocations).
    std::string encoded = encode_calls({&call, 1});
    std::string request = encoded;
    if (first_on_session(*call.script))
        if (std::string whole = eval_of_evalsha(encoded, *call.script); !whole.empty())
            request = std::move(whole);
    auto first = [](std::vector<Reply>& rs) {
        return rs.empty() ? Reply{} : std::move(rs.front());
    };
    exec(std::move(request), 1, deadline,
         [self = shared_from_this(), script = call.script, encoded = std::move(encoded), deadline,
          first, done = std::move(done)](Status st, std::vector<Reply> r) mutable {
             std::string again;
             if (st.ok() && !r.empty() && is_noscript(r.front()))
                 again = eval_of_evalsha(encoded, *script);
             // Empty: no NOSCRIPT, or a request it cannot rewrite, whose NOSCRIPT then stands.
             if (again.empty()) return done(std::move(st), first(r));
             self->exec(std::move(again), 1, deadline,
                        [done = std::move(done), first](Status st2, std::vector<Reply> r2) {
                            done(std::move(st2), first(r2));
                        });
         });
}

void AsyncConnection::connect() {
    connecting_ = true;
    transport_.async_open(
        ep_,
        std::min(Clock::now() + ep_.options.connect_timeout,
                 queued_.empty() ? Clock::time_point::max() : queued_.front().deadline),
        [self = shared_from_this(), g = gen_](const Status& st) {
            if (g != self->gen_) return;  // closed meanwhile; its requests were failed then
            self->connecting_ = false;
            if (!st.ok()) {
                fail(self->queued_, st);
                return self->drain_check();
            }
            self->connected_ = true;
            ++self->gen_;
            self->reader_.reset();
            self->writing_ = self->reading_ = false;
            self->flush();
        });
}

void AsyncConnection::flush_soon() {
    // While fewer than kEager requests are at the server it may be idle: write at once. While
    // more are, it is busy with them: gather what this turn of the loop makes into one write
    // (on a VM a write that wakes the server costs as much as the request), at most kGather.
    // Measured at 4/16/64 in flight: 46k/63k/66k cycles/s writing each at once, 52k/81k/99k
    // gathering (eager 2..4 and gather 4..8 were all within noise of one another).
    constexpr std::size_t kEager = 2;
    constexpr std::size_t kGather = 8;
    if (inflight_.size() < kEager || queued_.size() >= kGather) return flush();
    if (flush_posted_) return;
    flush_posted_ = true;
    asio::post(timer_.get_executor(), [self = shared_from_this()] {
        self->flush_posted_ = false;
        self->flush();
    });
}

void AsyncConnection::flush() {
    if (writing_ || queued_.empty() || !connected_) return;
    wbuf_.clear();
    while (!queued_.empty()) {
        wbuf_ += queued_.front().bytes;
        queued_.front().bytes.clear();
        inflight_.push_back(std::move(queued_.front()));
        queued_.pop_front();
    }
    // Out at once, as each request is made: a write left to a posted completion held back
    // every request made meanwhile, so the server got them in one late burst and sat idle
    // before it (a convoy that halved a pipeline of 64).
    std::error_code wec;
    std::size_t sent = transport_.try_write(asio::buffer(wbuf_), wec);
    if (wec) return send_failed(wec);
    if (!reading_) start_read();
    arm_timer();
    if (sent == wbuf_.size()) return;
    wbuf_.erase(0, sent);
    writing_ = true;
    transport_.async_write(asio::buffer(wbuf_), [self = shared_from_this(), g = gen_](
                                                    const std::error_code& ec, std::size_t) {
        if (g != self->gen_) return;
        self->writing_ = false;
        if (ec) return self->send_failed(ec);
        self->flush();
    });
}

void AsyncConnection::send_failed(const std::error_code& ec) {
    reset(Status::error(errc::unknown_outcome,
                        fmt::format("connection to {} failed while sending ({}); the request "
                                    "may have reached the server",
                                    ep_.describe(), ec.message())));
}

void AsyncConnection::start_read() {
    reading_ = true;
    transport_.async_read_some(asio::buffer(rbuf_), [self = shared_from_this(), g = gen_](
                                                        const std::error_code& ec, std::size_t n) {
        if (g != self->gen_) return;
        self->reading_ = false;
        if (ec)
            return self->reset(Status::error(
                errc::unknown_outcome,
                fmt::format("connection to {} closed before the reply arrived ({}): the server "
                            "may have restarted",
                            self->ep_.describe(), ec.message())));
        self->on_read(n);
    });
}

void AsyncConnection::on_read(std::size_t n) {
    unsigned g = gen_;
    try {
        reader_.feed(rbuf_.data(), n);
        while (auto r = reader_.next()) {
            if (inflight_.empty())
                throw std::runtime_error("the server sent a reply nobody asked for");
            Batch& b = inflight_.front();
            b.replies.push_back(std::move(*r));
            if (b.replies.size() < b.count) continue;
            Batch done = std::move(b);
            inflight_.pop_front();
            done.done({}, std::move(done.replies));  // may send more, or close us
            if (g != gen_) return;
        }
    } catch (const std::exception& ex) {
        return reset(Status::error(
            errc::protocol_error,
            fmt::format("{} sent an invalid reply ({}); the connection was reset and the "
                        "request's outcome is unknown",
                        ep_.describe(), ex.what())));
    }
    if (!inflight_.empty() && !reading_) start_read();
    arm_timer();
    drain_check();
}

void AsyncConnection::arm_timer() {
    auto next = Clock::time_point::max();
    if (!inflight_.empty()) next = inflight_.front().deadline;
    if (!connected_)
        for (const auto& q : queued_) next = std::min(next, q.deadline);
    // Nothing due: an armed wait is left to fire and find nothing (cancelling it was one more
    // system call per idle moment).
    if (next == Clock::time_point::max()) return;
    // An armed wait that ends no later stays: it re-arms for what is then due when it fires.
    // Moving it on every reply was a timerfd_settime per reply.
    if (waiting_ && timer_.expiry() <= next) return;
    timer_.expires_at(next);  // a wait still pending ends (aborted) and is ignored
    waiting_ = true;
    timer_.async_wait([self = shared_from_this(), w = ++wait_id_](const std::error_code& ec) {
        if (ec || w != self->wait_id_) return;
        self->waiting_ = false;
        self->on_deadline();
    });
}

void AsyncConnection::on_deadline() {
    const auto now = Clock::now();
    if (!connected_) {
        // Not sent (the session is still opening): a request past its deadline fails as safe
        // to retry, instead of going out long after its caller stopped waiting for it.
        std::deque<Batch> late;
        for (auto it = queued_.begin(); it != queued_.end();) {
            if (it->deadline > now) {
                ++it;
                continue;
            }
            late.push_back(std::move(*it));
            it = queued_.erase(it);
        }
        fail(late, Status::error(errc::timeout,
                                 fmt::format("the request was not sent within its deadline: the "
                                             "session with {} is still opening",
                                             ep_.describe())));
    }
    if (!inflight_.empty() && now >= inflight_.front().deadline)
        // Sent but unanswered: the session is stuck; reset it so later requests start clean.
        return reset(Status::error(
            errc::unknown_outcome,
            fmt::format("no reply from {} within the command timeout; the request was sent, so "
                        "it may have been executed",
                        ep_.describe())));
    arm_timer();
    drain_check();
}

void AsyncConnection::retarget(const std::string& host, std::uint16_t port) {
    ep_.host = host;
    ep_.port = port;
    if (connected_ || connecting_)
        reset(Status::error(errc::unknown_outcome,
                            "the primary moved (failover) while the request was in flight, so it "
                            "may have been executed"));
}

void AsyncConnection::reset(const Status& why) {
    transport_.close();   // an opening in progress ends too; its done is ignored (gen_)
    sent_whole_.clear();  // the next session may reach a server that never ran them
    connected_ = connecting_ = false;
    writing_ = reading_ = false;
    ++gen_;
    reader_.reset();
    timer_.cancel();
    waiting_ = false;
    auto lost = std::move(inflight_);
    inflight_.clear();
    fail(lost, why);
    // Requests queued meanwhile were not sent: a new session takes them.
    if (!queued_.empty() && !connecting_) connect();
    drain_check();
}

void AsyncConnection::close_when_idle(std::function<void()> closed) noexcept {
    drained_ = std::move(closed);
    drain_check();
}

void AsyncConnection::drain_check() noexcept {
    if (!drained_ || !queued_.empty() || !inflight_.empty()) return;
    auto closed = std::move(drained_);
    drained_ = nullptr;
    close();
    closed();
}

void AsyncConnection::close() noexcept {
    closed_ = true;
    try {
        auto waiting = std::move(queued_);
        queued_.clear();
        fail(waiting, Status::error(errc::connection_lost, "the client is closing"));
        reset(Status::error(errc::unknown_outcome,
                            "the client closed while the request was in "
                            "flight"));
    } catch (...) {
        // Out of memory making the messages: the callbacks are dropped with the batches.
    }
}

void AsyncConnection::fail(std::deque<Batch>& batches, const Status& why) {
    auto all = std::move(batches);
    batches.clear();
    for (auto& b : all) b.done(why, {});
}

}  // namespace deadbolt::detail
