// Transport: one byte stream to a server (TCP, unix socket or TLS over TCP) and the
// session opening on it (connect, TLS handshake, AUTH, SELECT) under one deadline.
#pragma once

#include <asio.hpp>
#include <asio/ssl.hpp>

#include <chrono>
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

    /// Closes any previous stream, then connects and prepares a session. Runs io (on the
    /// calling thread) until done or deadline; the caller must be the only one running io.
    Status open(const Endpoint& ep, Clock::time_point deadline);
    void close() noexcept;
    bool is_open() const noexcept { return !std::holds_alternative<std::monostate>(s_); }

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

  private:
    using Tls = asio::ssl::stream<asio::ip::tcp::socket>;
    template <class S>
    static S& deref(S& s) {
        return s;
    }
    static Tls& deref(std::unique_ptr<Tls>& s) { return *s; }

    // Runs op(stream, h) on the open stream; with none, completes h with not_connected.
    template <class Op, class Handler>
    void start(Op&& op, Handler&& h) {
        std::visit(
            [&](auto& s) {
                if constexpr (std::is_same_v<std::decay_t<decltype(s)>, std::monostate>)
                    asio::post(io_, [h = std::forward<Handler>(h)]() mutable {
                        h(asio::error::not_connected, 0);
                    });
                else
                    op(deref(s), std::forward<Handler>(h));
            },
            s_);
    }

    Status connect_tcp(const Endpoint& ep, Clock::time_point deadline);
    Status connect_unix(const Endpoint& ep, Clock::time_point deadline);
    Status prepare_tls(const Endpoint& ep);
    Status handshake_tls(const Endpoint& ep, Clock::time_point deadline);
    Status hello(const Endpoint& ep, Clock::time_point deadline);

    asio::io_context& io_;
    std::variant<std::monostate, asio::ip::tcp::socket, asio::local::stream_protocol::socket,
                 std::unique_ptr<Tls>>
        s_;
    std::shared_ptr<asio::ssl::context> tls_ctx_;
    // Closed TLS streams: their aborted operations still call into them when the io_context
    // runs, so they are freed only once those handlers have run (at the next open()).
    std::vector<std::unique_ptr<Tls>> retired_;
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
