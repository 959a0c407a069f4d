#include "backends/redis/net/async_connection.hpp"

#include <fmt/format.h>

#include <asio/write.hpp>

namespace deadbolt::detail {

AsyncConnection::AsyncConnection(EventLoop& loop, Endpoint ep)
    : keepalive_(loop.keepalive()),
      loop_(loop),
      ep_(std::move(ep)),
      transport_(loop.io()),
      timer_(loop.io()),
      rbuf_(std::size_t{64} * 1024) {}

void AsyncConnection::exec(std::string encoded, std::size_t count, Clock::time_point deadline,
                           Done done) {
    queued_.push_back({std::move(encoded), count, {}, deadline, std::move(done)});
    if (connected_) return flush();
    if (connecting_) return;
    connecting_ = true;
    // Transport::open runs the context itself: not inside a handler, so between them.
    loop_.defer([self = shared_from_this()] { self->connect(); });
}

void AsyncConnection::eval(const ScriptCall& call, Clock::time_point deadline,
                           std::function<void(Status, Reply)> done) {
    std::string bytes;
    encode_evalsha(bytes, *call.script, call.keys, call.args);
    // Its own copy of the keys and arguments (call's views need not outlive this call), so
    // that EVAL, with the script's whole source, is encoded only after a NOSCRIPT.
    OwnedCall again{
        call.script, {call.keys.begin(), call.keys.end()}, {call.args.begin(), call.args.end()}};
    exec(std::move(bytes), 1, deadline,
         [self = shared_from_this(), again = std::move(again), deadline, done = std::move(done)](
             Status st, std::vector<Reply> r) mutable {
             if (!st.ok()) return done(std::move(st), {});
             if (!is_noscript(r.front())) return done({}, std::move(r.front()));
             // After SCRIPT FLUSH or a restart: EVAL runs it and caches it again.
             std::string retry;
             ScriptCall view = again.view();
             encode_eval(retry, *view.script, view.keys, view.args);
             self->exec(std::move(retry), 1, deadline,
                        [done = std::move(done)](Status st2, std::vector<Reply> r2) {
                            done(std::move(st2), r2.empty() ? Reply{} : std::move(r2.front()));
                        });
         });
}

void AsyncConnection::connect() {
    Status st = transport_.open(
        ep_, std::min(Clock::now() + ep_.options.connect_timeout,
                      queued_.empty() ? Clock::time_point::max() : queued_.front().deadline));
    connecting_ = false;
    if (!st.ok()) {
        fail(queued_, st);
        return;
    }
    connected_ = true;
    ++gen_;
    reader_.reset();
    writing_ = reading_ = false;
    flush();
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
    writing_ = true;
    transport_.async_write(asio::buffer(wbuf_), [self = shared_from_this(), g = gen_](
                                                    const std::error_code& ec, std::size_t) {
        if (g != self->gen_) return;
        self->writing_ = false;
        if (ec)
            return self->reset(Status::error(
                errc::unknown_outcome,
                fmt::format("connection to {} failed while sending ({}); the request may have "
                            "reached the server",
                            self->ep_.describe(), ec.message())));
        self->flush();
    });
    if (!reading_) start_read();
    arm_timer();
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
}

void AsyncConnection::arm_timer() {
    if (inflight_.empty()) {
        timer_.cancel();
        return;
    }
    if (timer_.expiry() == inflight_.front().deadline) return;
    timer_.expires_at(inflight_.front().deadline);
    timer_.async_wait([self = shared_from_this(), g = gen_](const std::error_code& ec) {
        if (ec || g != self->gen_ || self->inflight_.empty()) return;
        if (Clock::now() < self->inflight_.front().deadline) return self->arm_timer();
        // Sent but unanswered: the session is stuck; reset it so later requests start clean.
        self->reset(Status::error(
            errc::unknown_outcome,
            fmt::format("no reply from {} within the command timeout; the request was sent, so "
                        "it may have been executed",
                        self->ep_.describe())));
    });
}

void AsyncConnection::retarget(const std::string& host, std::uint16_t port) {
    ep_.host = host;
    ep_.port = port;
    if (connected_)
        reset(Status::error(errc::unknown_outcome,
                            "the primary moved (failover) while the request was in flight, so it "
                            "may have been executed"));
}

void AsyncConnection::reset(const Status& why) {
    transport_.close();
    connected_ = false;
    writing_ = reading_ = false;
    ++gen_;
    reader_.reset();
    timer_.cancel();
    auto lost = std::move(inflight_);
    inflight_.clear();
    fail(lost, why);
    // Requests queued meanwhile were not sent: a new session takes them.
    if (!queued_.empty() && !connecting_) {
        connecting_ = true;
        loop_.defer([self = shared_from_this()] { self->connect(); });
    }
}

void AsyncConnection::close() noexcept {
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
