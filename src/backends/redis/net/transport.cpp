#include "backends/redis/net/transport.hpp"

#include <fmt/format.h>

#include <openssl/err.h>

#include "backends/redis/net/resp.hpp"

namespace deadbolt::detail {
namespace {

Status timed_out(const Endpoint& ep, std::string_view step) {
    return Status::error(errc::connect_failed,
                         fmt::format("{} to {} did not finish within the connect timeout ({} ms): "
                                     "is the server up and reachable?",
                                     step, ep.describe(), ep.options.connect_timeout.count()));
}

// Completion of one connect-phase operation.
struct Done {
    std::error_code ec;
    bool done = false;
    auto handler() {
        return [this](const std::error_code& e, auto&&...) {
            ec = e;
            done = true;
        };
    }
};

// Runs io until d is done or the deadline passes. On the deadline: cancel(), then wait
// (bounded) for the aborted handler, because it refers to the caller's stack.
template <class Cancel>
bool await(asio::io_context& io, Clock::time_point deadline, const Done& d, Cancel cancel) {
    if (run_until(io, deadline, [&] { return d.done; })) return true;
    cancel();
    run_until(io, Clock::now() + std::chrono::seconds(1), [&] { return d.done; });
    return false;
}

}  // namespace

void Transport::close() noexcept {
    std::error_code ignored;
    std::visit(
        [&](auto& s) {
            using S = std::decay_t<decltype(s)>;
            if constexpr (std::is_same_v<S, std::unique_ptr<Tls>>) {
                s->lowest_layer().close(ignored);
                retired_.push_back(std::move(s));
            } else if constexpr (!std::is_same_v<S, std::monostate>)
                s.close(ignored);
        },
        s_);
    // The closed socket stays alive until its aborted handlers have run; they check state.
    s_ = std::monostate{};
}

Status Transport::open(const Endpoint& ep, Clock::time_point deadline) {
    close();
    if (!retired_.empty()) {
        if (io_.stopped()) io_.restart();
        io_.poll();  // aborted operations of closed streams finish now
        retired_.clear();
    }
    if (ep.options.tls.enabled && !tls_ctx_) {
        Status st = prepare_tls(ep);
        if (!st.ok()) return st;
    }
    Status st = ep.kind == Endpoint::Kind::unix_socket ? connect_unix(ep, deadline)
                                                       : connect_tcp(ep, deadline);
    if (st.ok() && ep.options.tls.enabled) st = handshake_tls(ep, deadline);
    if (st.ok()) st = hello(ep, deadline);
    if (!st.ok()) close();
    return st;
}

Status Transport::connect_tcp(const Endpoint& ep, Clock::time_point deadline) {
    std::vector<asio::ip::tcp::endpoint> targets;
    std::error_code not_numeric;
    auto address = asio::ip::make_address(ep.host, not_numeric);
    if (!not_numeric) {
        // An address needs no resolver, and so no resolver thread in this process.
        targets.emplace_back(address, ep.port);
    } else {
        asio::ip::tcp::resolver resolver(io_);
        Done resolved;
        resolver.async_resolve(
            ep.host, std::to_string(ep.port),
            [&](const std::error_code& e, const asio::ip::tcp::resolver::results_type& r) {
                for (const auto& entry : r) targets.push_back(entry.endpoint());
                resolved.handler()(e);
            });
        if (!await(io_, deadline, resolved, [&] { resolver.cancel(); }))
            return timed_out(ep, "resolving the host");
        if (resolved.ec)
            return Status::error(errc::connect_failed, fmt::format("cannot resolve host '{}': {}",
                                                                   ep.host, resolved.ec.message()));
    }
    asio::ip::tcp::socket sock(io_);
    std::error_code ignored;
    Done connected;
    asio::async_connect(sock, targets, connected.handler());
    if (!await(io_, deadline, connected, [&] { sock.close(ignored); }))
        return timed_out(ep, "connecting");
    if (connected.ec)
        return Status::error(errc::connect_failed,
                             fmt::format("cannot connect to {}: {}: is redis-server running there?",
                                         ep.describe(), connected.ec.message()));
    sock.set_option(asio::ip::tcp::no_delay(true), ignored);
    if (ep.options.keepalive) sock.set_option(asio::socket_base::keep_alive(true), ignored);
    if (ep.options.tls.enabled)
        s_ = std::make_unique<Tls>(std::move(sock), *tls_ctx_);  // ctx made in prepare_tls
    else
        s_ = std::move(sock);
    return {};
}

Status Transport::connect_unix(const Endpoint& ep, Clock::time_point deadline) {
    asio::local::stream_protocol::socket sock(io_);
    std::error_code ignored;
    Done connected;
    sock.async_connect(asio::local::stream_protocol::endpoint(ep.path), connected.handler());
    if (!await(io_, deadline, connected, [&] { sock.close(ignored); }))
        return timed_out(ep, "connecting");
    if (connected.ec)
        return Status::error(errc::connect_failed,
                             fmt::format("cannot connect to unix socket '{}': {}: is redis-server "
                                         "listening there (unixsocket in redis.conf)?",
                                         ep.path, connected.ec.message()));
    s_ = std::move(sock);
    return {};
}

Status Transport::prepare_tls(const Endpoint& ep) {
    const auto& o = ep.options.tls;
    auto ctx = std::make_shared<asio::ssl::context>(asio::ssl::context::tls_client);
    std::error_code ec;
    auto fail = [&](std::string_view what, const std::string& file) {
        return Status::error(errc::tls_failed,
                             fmt::format("TLS: cannot load {} '{}': {}", what, file, ec.message()));
    };
    if (o.ca_file.empty())
        ctx->set_default_verify_paths(ec);
    else
        ctx->load_verify_file(o.ca_file, ec);
    if (ec) return fail("CA file", o.ca_file);
    if (!o.cert_file.empty()) {
        ctx->use_certificate_chain_file(o.cert_file, ec);
        if (ec) return fail("client certificate", o.cert_file);
        ctx->use_private_key_file(o.key_file, asio::ssl::context::pem, ec);
        if (ec) return fail("client key", o.key_file);
    }
    ctx->set_verify_mode(o.verify ? asio::ssl::verify_peer : asio::ssl::verify_none);
    tls_ctx_ = std::move(ctx);
    return {};
}

Status Transport::handshake_tls(const Endpoint& ep, Clock::time_point deadline) {
    auto* tls = std::get_if<std::unique_ptr<Tls>>(&s_);
    if (!tls) return Status::error(errc::tls_failed, "internal: TLS stream missing");
    const auto& o = ep.options.tls;
    std::string sni = o.sni.empty() ? ep.host : o.sni;
    if (!SSL_set_tlsext_host_name((*tls)->native_handle(), sni.c_str()))
        return Status::error(errc::tls_failed, fmt::format("cannot set TLS SNI '{}'", sni));
    if (o.verify) (*tls)->set_verify_callback(asio::ssl::host_name_verification(sni));
    std::error_code ignored;
    Done shaken;
    (*tls)->async_handshake(asio::ssl::stream_base::client, shaken.handler());
    if (!await(io_, deadline, shaken, [&] { (*tls)->lowest_layer().close(ignored); }))
        return timed_out(ep, "the TLS handshake");
    if (shaken.ec)
        return Status::error(
            errc::tls_failed,
            fmt::format("TLS handshake with {} failed: {}: check ca=, cert=, key= and that the "
                        "server name '{}' matches its certificate",
                        ep.describe(), shaken.ec.message(), sni));
    return {};
}

Status Transport::hello(const Endpoint& ep, Clock::time_point deadline) {
    const auto& o = ep.options;
    std::string out;
    int expected = 0;
    if (!o.password.empty()) {
        if (o.username.empty())
            encode_command(out, {"AUTH", o.password});
        else
            encode_command(out, {"AUTH", o.username, o.password});
        ++expected;
    }
    if (o.db != 0) {
        std::string db = std::to_string(o.db);
        encode_command(out, {"SELECT", db});
        ++expected;
    }
    // PING proves the server speaks RESP before we trust it with locks.
    encode_command(out, {"PING"});
    ++expected;

    std::error_code ec;
    bool written = false;
    async_write(asio::buffer(out), [&](const std::error_code& e, std::size_t) {
        if (e) ec = e;
        written = true;
    });
    RespReader reader;
    std::vector<Reply> replies;
    char buf[4096];
    bool reading = false;
    Status parse_error;
    auto done = [&] {
        return ec || !parse_error.ok() || (written && int(replies.size()) == expected);
    };
    // Our handlers refer to this stack frame: none may be pending when we return, whichever
    // way the loop ends (a failed write with a read in flight, a timeout, ...).
    auto drain = [&] {
        if (!reading && written) return;
        close();
        run_until(io_, Clock::now() + std::chrono::seconds(1), [&] { return !reading && written; });
    };
    while (!done()) {
        if (!reading) {
            reading = true;
            async_read_some(asio::buffer(buf), [&](const std::error_code& e, std::size_t n) {
                reading = false;
                if (e) {
                    ec = e;
                    return;
                }
                try {
                    reader.feed(buf, n);
                    while (auto r = reader.next()) replies.push_back(std::move(*r));
                } catch (const std::exception& ex) {
                    parse_error =
                        Status::error(errc::protocol_error,
                                      fmt::format("{} did not answer like a Redis server ({})",
                                                  ep.describe(), ex.what()));
                }
            });
        }
        if (!run_until(io_, deadline, [&] { return done() || !reading; })) {
            drain();
            return timed_out(ep, "the session handshake (AUTH/SELECT/PING)");
        }
    }
    drain();
    if (!parse_error.ok()) return parse_error;
    if (ec)
        return Status::error(errc::connect_failed,
                             fmt::format("{} closed the connection during the handshake: {}",
                                         ep.describe(), ec.message()));
    for (const auto& r : replies)
        if (r.is_error()) return from_server_error(r.str);
    if (replies.back().type != Reply::Type::status || replies.back().str != "PONG")
        return Status::error(
            errc::protocol_error,
            fmt::format("{} answered PING with something other than PONG", ep.describe()));
    return {};
}

}  // namespace deadbolt::detail
