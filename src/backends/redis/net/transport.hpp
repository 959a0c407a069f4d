// Transport: one byte stream to a server (TCP, unix socket or TLS over TCP) and the
// session opening on it (connect, TLS handshake, AUTH, SELECT) under one deadline.
#pragma once

#include <asio.hpp>
#include <asio/ssl.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <variant>
#include <vector>

#include "backends/redis/net/endpoint.hpp"
#include "backends/redis/net/status.hpp"

namespace deadbolt::detail {

using Clock = std::chrono::steady_clock;

class Transport {
  public:
    explicit Transport(asio::io_context& io) : io_(io) {}
    ~Transport();
    Transport(const Transport&) = delete;
    Transport& operator=(const Transport&) = delete;

    /// Closes any previous stream, then connects and prepares a session. Runs io (on the
    /// calling thread) until done or deadline; the caller must be the only one running io.
    /// Fails with connect_failed (unreachable, refused, timed out, closed in the handshake),
    /// tls_failed, protocol_error (not a Redis server) or the server's error (a bad password).
    Status open(const Endpoint& ep, Clock::time_point deadline);
    using Opened = std::function<void(Status)>;
    /// The same without blocking: done runs once, on io's thread, by deadline. Whoever owns
    /// this transport keeps it alive until then (an AsyncConnection holds itself in done).
    void async_open(const Endpoint& ep, Clock::time_point deadline, Opened done);
    /// Closes the stream, or ends an opening in progress (its done says connection_lost).
    void close() noexcept;
    bool is_open() const noexcept { return !std::holds_alternative<std::monostate>(s_); }
    /// True when the open stream has something to read or the peer closed it: on a
    /// connection with no request in flight, the server has hung up (it restarted, or closed
    /// an idle client). Never blocks.
    bool peer_closed() noexcept;

    template <class Buffers, class Handler>
    void async_write(const Buffers& b, Handler&& h) {
        start([&](auto& s, auto&& hh) { asio::async_write(s, b, std::forward<decltype(hh)>(hh)); },
              std::forward<Handler>(h));
    }

    template <class Buffers, class Handler>
    void async_read_some(const Buffers& b, Handler&& h) {
        start([&](auto& s, auto&& hh) { s.async_read_some(b, std::forward<decltype(hh)>(hh)); },
              std::forward<Handler>(h));
    }

    /// Writes what the socket takes at once, without waiting: the bytes written (fewer than
    /// asked when its buffer is full). On TLS it writes nothing (records are made by
    /// async_write only); ec says why a plain socket failed.
    std::size_t try_write(asio::const_buffer b, std::error_code& ec);
    /// The descriptor of an open plain (TCP or unix) socket, for a caller that reads from it
    /// itself (a blocking read, which it makes non-blocking again before any of this
    /// transport's asynchronous operations); -1 on TLS (whose bytes only its own operations
    /// may touch) or when closed.
    int plain_fd() noexcept;

  private:
    using Tls = asio::ssl::stream<asio::ip::tcp::socket>;
    // A TLS stream is shared with every operation in flight on it: an operation aborted by
    // close may still start another step (a read on the closed socket) whose handler reads
    // the stream's buffers, so the stream lives until the last of them has run.
    using SharedTls = std::shared_ptr<Tls>;

    // Runs op(stream, h) on the open stream; with none, completes h with not_connected.
    template <class Op, class Handler>
    void start(Op&& op, Handler&& h) {
        std::visit(
            [&](auto& s) {
                using S = std::decay_t<decltype(s)>;
                if constexpr (std::is_same_v<S, std::monostate>)
                    asio::post(io_, [h = std::forward<Handler>(h)]() mutable {
                        h(asio::error::not_connected, 0);
                    });
                else if constexpr (std::is_same_v<S, SharedTls>)
                    op(*s, [keep = s, h = std::forward<Handler>(h)](
                               const std::error_code& e, std::size_t n) mutable { h(e, n); });
                else
                    op(s, std::forward<Handler>(h));
            },
            s_);
    }

    // The open stream's socket descriptor (a TLS stream's only if tls_too); -1 when closed.
    int native_fd(bool tls_too) noexcept;
    // Runs f(socket, ec) on an open plain socket; 0 on TLS or none. f must not block by itself
    // (MSG_DONTWAIT): Connection may have made the descriptor blocking behind Asio's flag.
    template <class F>
    std::size_t on_plain(std::error_code& ec, F f);

    struct Opening;
    Status prepare_tls(const Endpoint& ep);
    void close_stream() noexcept;

    asio::io_context& io_;
    std::variant<std::monostate, asio::ip::tcp::socket, asio::local::stream_protocol::socket,
                 SharedTls>
        s_;
    std::shared_ptr<asio::ssl::context> tls_ctx_;
    std::shared_ptr<Opening> opening_;  // the opening in progress, if any
};

/// Runs io on this thread until done() or deadline; false on deadline.
template <class Pred>
bool run_until(asio::io_context& io, Clock::time_point deadline, Pred done) {
    while (!done()) {
        if (io.stopped()) io.restart();
        if (Clock::now() >= deadline) return false;
        io.run_one_until(deadline);
    }
    return true;
}

}  // namespace deadbolt::detail
