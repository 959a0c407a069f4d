#include "backends/redis/net/connection.hpp"

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <algorithm>
#include <thread>

#include "core/backoff.hpp"

namespace deadbolt::detail {

struct Connection::Batch {
    std::string bytes;
    std::size_t count = 0;
    std::vector<Reply> replies;
    Status status;
    bool sent = false;       // handed to a write: from now on, failure means unknown outcome
    bool done = false;       // status and replies are final; the caller may return
    bool abandoned = false;  // the caller gave up; replies still arrive and are dropped
    std::condition_variable cv;
};

Connection::Connection(Endpoint ep)
    : ep_(std::move(ep)), transport_(io_), rbuf_(std::size_t{64} * 1024) {}

Connection::~Connection() {
    transport_.close();
}

Status Connection::exec(std::string encoded, std::size_t count, std::vector<Reply>& replies,
                        Clock::time_point deadline) {
    BatchPtr b;
    {
        std::lock_guard lk(m_);
        b = enqueue_locked(std::move(encoded), count);
    }
    return wait(b, replies, deadline);
}

bool Connection::busy() {
    std::lock_guard lk(m_);
    return leader_ || !queued_.empty() || !inflight_.empty();
}

Connection::BatchPtr Connection::enqueue_locked(std::string encoded, std::size_t count) {
    auto b = std::make_shared<Batch>();
    b->bytes = std::move(encoded);
    b->count = count;
    b->replies.reserve(count);
    queued_.push_back(b);
    if (leader_ && !wake_posted_) wake_locked();
    return b;
}

void Connection::wake_locked() {
    if (polling_) {
        // The leader waits for replies in a read: our bytes go out from here, and it wakes
        // for the replies alone. A write the socket did not take (the reactor's job) or a
        // failed one waits for the leader's next reply, which its own request brings. Not
        // after a retarget: the session it reads is the old server's, and the leader's next
        // turn moves to the new one before it sends what is queued.
        if (!target_) flush_locked(false);
        return;
    }
    wake_posted_ = true;
    // In the reactor: its run_one returns and flushes our bytes. Between two waits the
    // leader flushes them itself before it waits again.
    if (in_reactor_) asio::post(io_, [] {});
}

Connection::Pending Connection::submit(std::string encoded, std::size_t count) {
    std::unique_lock lk(m_);
    auto b = enqueue_locked(std::move(encoded), count);
    // With a leader, it flushes our bytes; without a session, wait() connects first.
    if (leader_ || !connected_ || target_ || drop_if_hung_up_locked()) return b;
    leader_ = true;
    flush_locked(true);
    if (writing_) {
        lk.unlock();
        if (io_.stopped()) io_.restart();
        io_.poll();  // the rest of the write goes out now if the socket takes it
        lk.lock();
    }
    leader_ = false;
    hand_off_locked(b.get());
    return b;
}

void Connection::hand_off_locked(const Batch* skip) {
    // Hand the socket to a caller still waiting, oldest first (skip: submit()'s own batch,
    // whose caller is not waiting on it yet).
    for (auto* q : {&queued_, &inflight_}) {
        for (auto& x : *q)
            if (!x->done && x.get() != skip) {
                x->cv.notify_one();
                return;
            }
    }
}

Status Connection::wait(const Pending& b, std::vector<Reply>& replies, Clock::time_point deadline) {
    std::unique_lock lk(m_);
    while (!b->done) {
        if (!leader_) {
            leader_ = true;
            lk.unlock();
            lead(b, deadline);
            lk.lock();
            leader_ = false;
            hand_off_locked();
        } else if (b->cv.wait_until(lk, deadline) == std::cv_status::timeout && !b->done) {
            if (!b->sent) {
                std::erase(queued_, b);
                b->status = Status::error(errc::timeout,
                                          "the request was not sent within its "
                                          "deadline: the connection is congested");
            } else {
                b->abandoned = true;
                b->status = Status::error(
                    errc::unknown_outcome,
                    fmt::format("no reply from {} within the deadline; the request was sent, "
                                "so it may have been executed",
                                ep_.describe()));
            }
            b->done = true;
            // Woken to lead as its time ran out, it passes the turn on rather than leave the
            // others with no leader until their own deadlines.
            if (!leader_) hand_off_locked(b.get());
        }
    }
    replies = std::move(b->replies);
    return b->status;
}

void Connection::retarget(const std::string& host, std::uint16_t port) {
    std::lock_guard lk(m_);
    target_.emplace(host, port);
    // A leader waiting for the old server (partitioned, it may never answer) moves now: its
    // blocking read ends (the socket stops reading; only the leader closes it, and it is in
    // that read, or waits for m_), or its reactor wakes. Queued callers go to the new one.
    // (transport_ is looked at only then: a leader that connects changes it without m_.)
    if (polling_) {
        if (int fd = transport_.plain_fd(); fd >= 0) ::shutdown(fd, SHUT_RD);
    } else if (leader_ && in_reactor_) {
        asio::post(io_, [] {});
    }
}

void Connection::lead(const BatchPtr& mine, Clock::time_point deadline) {
    for (;;) {
        int fd = -1;
        {
            // One critical section per turn: a lone caller's round trip takes the lock here
            // and in read_direct, and no more.
            std::unique_lock lk(m_);
            if (mine->done) return;
            if (target_) {
                ep_.host = std::move(target_->first);
                ep_.port = target_->second;
                target_.reset();
                connect_failures_ = 0;
                if (connected_)
                    reset(Status::error(errc::unknown_outcome,
                                        "the primary moved (failover) while the request was "
                                        "in flight, so it may have been executed"));
                if (mine->done) return;  // the next caller leads to the new primary
            }
            in_reactor_ = false;
            drop_if_hung_up_locked();
            if (!connected_) {
                lk.unlock();  // connecting may sleep between tries
                Status st = connect(deadline);
                lk.lock();
                // Retargeted meanwhile: what is queued goes to the new primary (the turn's
                // start closes a session just opened to the old one), not to this one.
                if (target_) continue;
                if (!st.ok()) {
                    // Nothing of ours was sent: every queued caller learns why.
                    for (auto& q : queued_) {
                        q->status = st;
                        q->done = true;
                        q->cv.notify_one();
                    }
                    queued_.clear();
                    return;
                }
            }
            wake_posted_ = false;
            flush_locked(true);
            if (!writing_ && !reading_ && !inflight_.empty()) fd = transport_.plain_fd();
            // A direct read blocks, bounded by the receive timeout; where either cannot be
            // set, the reactor waits instead (a read with no bound could wait for ever).
            if (fd >= 0 &&
                !(set_blocking_locked(true) && bound_.fit(fd, deadline - Clock::now()))) {
                set_blocking_locked(false);
                fd = -1;
            }
            polling_ = fd >= 0;
            in_reactor_ = !polling_;
            if (in_reactor_ && !reading_ && !inflight_.empty()) start_read();
        }
        if (fd >= 0) {
            if (read_direct(fd, *mine)) return;
        } else {
            if (io_.stopped()) io_.restart();
            io_.run_one_until(deadline);
        }
        if (Clock::now() < deadline) continue;
        std::lock_guard lk(m_);
        if (mine->done) return;
        if (!mine->sent) {
            std::erase(queued_, mine);
            mine->status =
                Status::error(errc::timeout, "the request was not sent within its deadline");
            mine->done = true;
            return;
        }
        // Sent but unanswered: the session is stuck; reset it so later callers start clean.
        reset(Status::error(errc::unknown_outcome,
                            fmt::format("no reply from {} within the command timeout; the request "
                                        "was sent, so it may have been executed",
                                        ep_.describe())));
        return;
    }
}

Status Connection::connect(Clock::time_point deadline) {
    for (;;) {
        auto attempt_deadline = std::min(deadline, Clock::now() + ep_.options.connect_timeout);
        Status st = transport_.open(ep_, attempt_deadline);
        if (st.ok()) {
            connected_ = true;
            connect_failures_ = 0;
            blocking_ = false;  // a new socket: Asio's, non-blocking, no timeout set
            bound_.forget();
            idle_since_ = Clock::now();
            ++gen_;
            reader_.reset();
            wbuf_.clear();
            writing_ = reading_ = false;
            return st;
        }
        // Only a server that was reached before and is unreachable now (a restart) is worth
        // another try; auth or TLS errors are final, and so is a first refusal.
        if (st.ec != make_error_code(errc::connect_failed) || !ep_.retry_connect ||
            !ep_.reached->load())
            return st;
        {
            std::lock_guard lk(m_);
            if (target_) return st;  // the primary moved: no more tries at the old address
        }
        auto pause = jittered_backoff(connect_failures_++, ep_.options.reconnect_min,
                                      ep_.options.reconnect_max);
        if (Clock::now() + pause >= deadline) return st;
        std::this_thread::sleep_for(pause);
    }
}

void Connection::flush_locked(bool by_leader) {
    if (writing_ || queued_.empty() || !connected_) return;
    wbuf_.clear();
    for (auto& q : queued_) {
        wbuf_ += q->bytes;
        q->sent = true;
        inflight_.push_back(std::move(q));
    }
    queued_.clear();
    // Out at once from this thread; the reactor only sends what the socket did not take.
    std::error_code ec;
    std::size_t sent = transport_.try_write(asio::buffer(wbuf_), ec);
    if (ec) {
        // The leader resets the session: it may be polling its socket now.
        if (by_leader)
            send_failed(ec);
        else
            send_error_ = ec;
        return;
    }
    if (sent == wbuf_.size()) return;
    wbuf_.erase(0, sent);
    start_write();
}

void Connection::start_write() {
    set_blocking_locked(false);
    writing_ = true;
    transport_.async_write(asio::buffer(wbuf_),
                           [this, g = gen_](const std::error_code& ec, std::size_t) {
                               if (g != gen_) return;
                               writing_ = false;
                               if (!ec) return;
                               std::lock_guard lk(m_);
                               send_failed(ec);
                           });
}

void Connection::send_failed(const std::error_code& ec) {
    reset(Status::error(errc::unknown_outcome,
                        fmt::format("connection to {} failed while sending ({}); the request may "
                                    "have reached the server",
                                    ep_.describe(), ec.message())));
}

namespace {
Status closed_before_reply(const Endpoint& ep, const std::error_code& ec) {
    return Status::error(errc::unknown_outcome,
                         fmt::format("connection to {} closed before the reply arrived ({}): the "
                                     "server may have restarted",
                                     ep.describe(), ec.message()));
}
}  // namespace

void Connection::start_read() {
    set_blocking_locked(false);
    reading_ = true;
    transport_.async_read_some(asio::buffer(rbuf_),
                               [this, g = gen_](const std::error_code& ec, std::size_t n) {
                                   if (g != gen_) return;
                                   reading_ = false;
                                   if (ec) {
                                       std::lock_guard lk(m_);
                                       return reset(closed_before_reply(ep_, ec));
                                   }
                                   on_read(n);
                               });
}

void Connection::on_read(std::size_t n) {
    std::lock_guard lk(m_);
    if (consume_locked(n) && !inflight_.empty()) start_read();
}

bool Connection::set_blocking_locked(bool on) noexcept {
    if (blocking_ == on) return true;
    int nbio = on ? 0 : 1;
    if (int fd = transport_.plain_fd(); fd < 0 || ::ioctl(fd, FIONBIO, &nbio) != 0) return false;
    blocking_ = on;
    return true;
}

bool Connection::read_direct(int fd, const Batch& mine) {
    // A blocking read: the reply wakes it, or the receive timeout (EAGAIN), after which the
    // leader looks at the deadline again.
    ssize_t n = ::recv(fd, rbuf_.data(), rbuf_.size(), 0);
    int err = n < 0 ? errno : 0;
    std::lock_guard lk(m_);
    polling_ = false;
    if (send_error_) {
        auto failed = *send_error_;
        send_error_.reset();
        send_failed(failed);
        return mine.done;
    }
    if (n > 0) {
        consume_locked(static_cast<std::size_t>(n));
    } else if (n == 0 && target_) {
        // Ended by retarget(): the turn's start says the primary moved, and moves.
    } else if (n == 0 || (err != EAGAIN && err != EWOULDBLOCK && err != EINTR)) {
        reset(closed_before_reply(ep_, n == 0 ? asio::error::make_error_code(asio::error::eof)
                                              : std::error_code(err, std::system_category())));
    }
    return mine.done;
}

bool Connection::consume_locked(std::size_t n) {
    try {
        reader_.feed(rbuf_.data(), n);
        while (auto r = reader_.next()) {
            if (inflight_.empty())
                throw std::runtime_error("the server sent a reply nobody asked for");
            Batch& b = *inflight_.front();
            b.replies.push_back(std::move(*r));
            if (b.replies.size() == b.count) {
                complete_locked(b);
                inflight_.pop_front();
            }
        }
        if (inflight_.empty()) idle_since_ = Clock::now();
    } catch (const std::exception& ex) {
        reset(
            Status::error(errc::protocol_error,
                          fmt::format("{} sent an invalid reply ({}); the connection was reset and "
                                      "the request's outcome is unknown",
                                      ep_.describe(), ex.what())));
        return false;
    }
    return true;
}

bool Connection::drop_if_hung_up_locked() {
    // A busy session would have seen the hang-up in its reads; the probe (one poll) is for
    // sessions that sat idle, which is when servers restart unseen. Back-to-back requests
    // (a hot loop) skip it; a restart seen by the subscriber may be checked 30 ms after the
    // last reply, so the bar is low.
    constexpr auto kIdle = std::chrono::milliseconds(1);
    if (!connected_ || writing_ || !inflight_.empty() || Clock::now() - idle_since_ < kIdle ||
        !transport_.peer_closed())
        return false;
    transport_.close();
    connected_ = false;
    reading_ = false;
    ++gen_;
    reader_.reset();
    return true;
}

void Connection::complete_locked(Batch& b) {
    if (b.abandoned) return;
    b.done = true;
    b.cv.notify_one();
}

void Connection::reset(const Status& why) {
    transport_.close();
    connected_ = false;
    writing_ = reading_ = false;
    ++gen_;
    reader_.reset();
    for (auto& b : inflight_) {
        if (b->abandoned) continue;
        b->status = why;
        b->replies.clear();
        b->done = true;
        b->cv.notify_one();
    }
    inflight_.clear();
}

}  // namespace deadbolt::detail
