// Opening a session without blocking: resolve, connect, TLS handshake, then AUTH/SELECT/PING,
// each step a handler on the transport's context, the whole under one deadline timer. The
// blocking Transport::open runs the same steps on its own context, so there is one way in.
#include "backends/redis/net/transport.hpp"

#include <fmt/format.h>
#include <sys/socket.h>
#include <unistd.h>

#include <asio/steady_timer.hpp>

#include "backends/redis/net/resp.hpp"

namespace deadbolt::detail {
namespace {

Status timed_out(const Endpoint& ep, std::string_view step) {
    return Status::error(errc::connect_failed,
                         fmt::format("{} to {} did not finish within the connect timeout ({} ms): "
                                     "is the server up and reachable?",
                                     step, ep.describe(), ep.options.connect_timeout.count()));
}

// A process that forks and execs (`deadbolt run`, a job runner) must not hand our connections
// to its children: one that outlived us would keep them open, and could write into them.
// Asio opens sockets without SOCK_CLOEXEC, and a flag set later leaves a window in which a fork
// on another thread inherits the socket (run forks as its subscriber connects): so the socket
// is made here, close-on-exec from its first moment, and handed to s.
template <class Socket, class Protocol>
std::error_code open_close_on_exec(Socket& s, const Protocol& p) {
    std::error_code ec;
    if (s.is_open()) s.close(ec);
    int fd = ::socket(p.family(), p.type() | SOCK_CLOEXEC, p.protocol());
    if (fd < 0) return {errno, std::system_category()};
    s.assign(p, fd, ec);
    if (ec) ::close(fd);
    return ec;
}

// AUTH, SELECT and PING for ep, and how many replies they bring.
std::pair<std::string, std::size_t> hello_request(const Endpoint& ep) {
    const auto& o = ep.options;
    std::string out;
    std::size_t expected = 1;
    if (!o.password.empty()) {
        if (o.username.empty())
            encode_command(out, {"AUTH", o.password});
        else
            encode_command(out, {"AUTH", o.username, o.password});
        ++expected;
    }
    if (ep.redis.db != 0) {
        std::string db = std::to_string(ep.redis.db);
        encode_command(out, {"SELECT", db});
        ++expected;
    }
    // PING proves the server speaks RESP before we trust it with locks.
    encode_command(out, {"PING"});
    return {std::move(out), expected};
}

Status judge_hello(const Endpoint& ep, const std::vector<Reply>& replies) {
    for (const auto& r : replies)
        if (r.is_error()) return from_server_error(r.str);
    if (replies.back().type != Reply::Type::status || replies.back().str != "PONG")
        return Status::error(
            errc::protocol_error,
            fmt::format("{} answered PING with something other than PONG", ep.describe()));
    return {};
}

}  // namespace

// One opening in progress. Every handler holds it; the transport it fills outlives it (the
// owner of the transport keeps itself alive until done runs, or runs the context until then).
struct Transport::Opening : std::enable_shared_from_this<Opening> {
    Opening(Transport& t, Endpoint e, Clock::time_point deadline, Transport::Opened d)
        : t(t),
          ep(std::move(e)),
          timer(t.io_),
          resolver(t.io_),
          tcp(t.io_),
          local(t.io_),
          done(std::move(d)) {
        timer.expires_at(deadline);
    }

    Transport& t;
    Endpoint ep;
    asio::steady_timer timer;
    asio::ip::tcp::resolver resolver;
    asio::ip::tcp::socket tcp;
    asio::local::stream_protocol::socket local;
    Transport::Opened done;
    std::string_view step = "connecting";
    bool expired = false;  // the deadline passed: what fails now failed by it
    bool dropped = false;  // the transport closed it: t may be gone, and is not touched
    bool finished = false;
    std::string request;
    std::size_t expected = 0;
    RespReader reader;
    std::vector<Reply> replies;
    std::vector<char> buf = std::vector<char>(4096);

    void start() {
        timer.async_wait([self = shared_from_this()](const std::error_code& ec) {
            if (ec || self->finished || self->dropped) return;
            self->expired = true;
            self->abort();
        });
        if (ep.kind == Endpoint::Kind::unix_socket) return connect_unix();
        std::error_code not_numeric;
        auto address = asio::ip::make_address(ep.host, not_numeric);
        // An address needs no resolver, and so no resolver thread in this process.
        if (!not_numeric) return connect_tcp({asio::ip::tcp::endpoint(address, ep.port)});
        step = "resolving the host";
        resolver.async_resolve(
            ep.host, std::to_string(ep.port),
            [self = shared_from_this()](const std::error_code& e,
                                        const asio::ip::tcp::resolver::results_type& r) {
                if (e || self->dropped || self->expired)
                    return self->fail(e, [&] {
                        return Status::error(errc::connect_failed,
                                             fmt::format("cannot resolve host '{}': {}",
                                                         self->ep.host, e.message()));
                    });
                std::vector<asio::ip::tcp::endpoint> targets;
                for (const auto& entry : r) targets.push_back(entry.endpoint());
                self->connect_tcp(targets);
            });
    }

    // Each target in turn until one takes the connection (what asio::async_connect does for a
    // range, with sockets made close-on-exec).
    void connect_tcp(std::vector<asio::ip::tcp::endpoint> targets, std::size_t next = 0,
                     std::error_code last = asio::error::host_not_found) {
        step = "connecting";
        auto refused = [this](const std::error_code& e) {
            fail(e, [&] {
                return Status::error(
                    errc::connect_failed,
                    fmt::format("cannot connect to {}: {}: is redis-server running there?",
                                ep.describe(), e.message()));
            });
        };
        if (next >= targets.size()) return refused(last);
        if (auto e = open_close_on_exec(tcp, targets[next].protocol()))
            return connect_tcp(std::move(targets), next + 1, e);
        auto target = targets[next];
        tcp.async_connect(target, [self = shared_from_this(), targets = std::move(targets), next,
                                   refused](const std::error_code& e) mutable {
            if (e && !self->dropped && !self->expired && e != asio::error::operation_aborted &&
                next + 1 < targets.size())
                return self->connect_tcp(std::move(targets), next + 1, e);
            if (e || self->dropped || self->expired) return refused(e);
            std::error_code ignored;
            self->tcp.set_option(asio::ip::tcp::no_delay(true), ignored);
            if (self->ep.options.keepalive)
                self->tcp.set_option(asio::socket_base::keep_alive(true), ignored);
            if (!self->ep.options.tls.enabled) {
                self->t.s_ = std::move(self->tcp);
                return self->hello();
            }
            self->t.s_ = std::make_shared<Tls>(std::move(self->tcp), *self->t.tls_ctx_);
            self->handshake();
        });
    }

    void connect_unix() {
        if (auto e = open_close_on_exec(local, asio::local::stream_protocol()))
            return fail(e, [&] {
                return Status::error(
                    errc::connect_failed,
                    fmt::format("cannot open a unix socket for '{}': {}", ep.path, e.message()));
            });
        local.async_connect(
            asio::local::stream_protocol::endpoint(ep.path),
            [self = shared_from_this()](const std::error_code& e) {
                if (e || self->dropped || self->expired)
                    return self->fail(e, [&] {
                        return Status::error(
                            errc::connect_failed,
                            fmt::format("cannot connect to unix socket '{}': {}: is redis-server "
                                        "listening there (unixsocket in redis.conf)?",
                                        self->ep.path, e.message()));
                    });
                self->t.s_ = std::move(self->local);
                self->hello();
            });
    }

    void handshake() {
        step = "the TLS handshake";
        auto stream = std::get<SharedTls>(t.s_);
        auto& tls = *stream;
        const auto& o = ep.options.tls;
        std::string sni = o.sni.empty() ? ep.host : o.sni;
        if (!SSL_set_tlsext_host_name(tls.native_handle(), sni.c_str()))
            return finish(
                Status::error(errc::tls_failed, fmt::format("cannot set TLS SNI '{}'", sni)));
        if (o.verify) tls.set_verify_callback(asio::ssl::host_name_verification(sni));
        tls.async_handshake(asio::ssl::stream_base::client, [self = shared_from_this(), sni,
                                                             stream](const std::error_code& e) {
            if (e || self->dropped)
                return self->fail(e, [&] {
                    return Status::error(errc::tls_failed,
                                         fmt::format("TLS handshake with {} failed: {}: check "
                                                     "ca=, cert=, key= and that the server "
                                                     "name '{}' matches its certificate",
                                                     self->ep.describe(), e.message(), sni));
                });
            self->hello();
        });
    }

    void hello() {
        step = "the session handshake (AUTH/SELECT/PING)";
        std::tie(request, expected) = hello_request(ep);
        t.async_write(asio::buffer(request),
                      [self = shared_from_this()](const std::error_code& e, std::size_t) {
                          if (e) return self->fail(e, [&] { return self->closed_in_hello(e); });
                      });
        read();
    }

    void read() {
        t.async_read_some(asio::buffer(buf), [self = shared_from_this()](const std::error_code& e,
                                                                         std::size_t n) {
            if (e || self->dropped) return self->fail(e, [&] { return self->closed_in_hello(e); });
            try {
                self->reader.feed(self->buf.data(), n);
                while (auto r = self->reader.next()) self->replies.push_back(std::move(*r));
            } catch (const std::exception& ex) {
                return self->finish(Status::error(
                    errc::protocol_error,
                    fmt::format("{} did not answer like a Redis server ({}): check the URL's "
                                "scheme and port (etcd://, zk://, postgresql://, mysql://)",
                                self->ep.describe(), ex.what())));
            }
            if (self->replies.size() < self->expected) return self->read();
            self->finish(judge_hello(self->ep, self->replies));
        });
    }

    Status closed_in_hello(const std::error_code& e) const {
        // A peer never reached before that hangs up on PING without a word is not Redis: an
        // etcd, PostgreSQL or ZooKeeper server drops a request it cannot parse.
        if (replies.empty() && !ep.reached->load())
            return Status::error(
                errc::protocol_error,
                fmt::format("{} closed the connection without answering PING ({}): what "
                            "listens there does not speak Redis's protocol; check the URL's "
                            "scheme and port (etcd://, zk://, postgresql://, mysql://)",
                            ep.describe(), e.message()));
        return Status::error(errc::connect_failed,
                             fmt::format("{} closed the connection during the handshake: {}",
                                         ep.describe(), e.message()));
    }

    // A step failed: by the deadline (its operation was aborted), or for the reason why().
    template <class Why>
    void fail(const std::error_code& e, Why why) {
        if (finished) return;
        if (expired) return finish(timed_out(ep, step));
        if (dropped || e == asio::error::operation_aborted)
            return finish(Status::error(errc::connection_lost,
                                        fmt::format("the connection to {} was closed while it "
                                                    "was being opened",
                                                    ep.describe())));
        finish(why());
    }

    void finish(Status st) {
        if (finished) return;
        // A step whose success was queued as the deadline passed (and closed the stream)
        // opened nothing.
        if (st.ok() && expired) st = timed_out(ep, step);
        finished = true;
        if (st.ok()) ep.reached->store(true);
        timer.cancel();
        if (!dropped) {
            if (!st.ok()) abort();
            t.opening_.reset();  // may free this: self, in the handler, keeps it
        }
        auto d = std::move(done);
        d(std::move(st));  // last: it may destroy the transport's owner
    }

    // Stops every step in flight; their handlers then run with operation_aborted.
    void abort() noexcept {
        std::error_code ignored;
        resolver.cancel();
        tcp.close(ignored);
        local.close(ignored);
        if (!dropped) t.close_stream();
    }

    // The transport closes or goes: stop, and never touch it again.
    void drop() noexcept {
        dropped = true;
        abort();
        timer.cancel();
    }
};

Transport::~Transport() {
    close();
}

void Transport::close() noexcept {
    if (auto o = std::move(opening_)) o->drop();
    close_stream();
}

void Transport::async_open(const Endpoint& ep, Clock::time_point deadline, Opened done) {
    close();
    if (ep.options.tls.enabled && !tls_ctx_) {
        if (Status st = prepare_tls(ep); !st.ok()) return asio::post(io_, [st, done] { done(st); });
    }
    opening_ = std::make_shared<Opening>(*this, ep, deadline, std::move(done));
    opening_->start();
}

Status Transport::open(const Endpoint& ep, Clock::time_point deadline) {
    auto result = std::make_shared<std::optional<Status>>();
    async_open(ep, deadline, [result](Status st) { *result = std::move(st); });
    // The opening's own timer ends it by the deadline; the margin is for its aborted handlers.
    if (!run_until(io_, deadline + std::chrono::seconds(1), [&] { return result->has_value(); })) {
        close();
        run_until(io_, Clock::now() + std::chrono::seconds(1), [&] { return result->has_value(); });
        if (!result->has_value()) return timed_out(ep, "opening the session");
    }
    return **result;
}

}  // namespace deadbolt::detail
