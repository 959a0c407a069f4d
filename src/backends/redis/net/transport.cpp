#include "backends/redis/net/transport.hpp"

#include <fmt/format.h>
#include <poll.h>

namespace deadbolt::detail {

template <class F>
std::size_t Transport::on_plain(std::error_code& ec, F f) {
    ec.clear();
    return std::visit(
        [&](auto& s) -> std::size_t {
            using S = std::decay_t<decltype(s)>;
            if constexpr (std::is_same_v<S, asio::ip::tcp::socket> ||
                          std::is_same_v<S, asio::local::stream_protocol::socket>) {
                if (!s.non_blocking()) s.non_blocking(true, ec);
                std::size_t n = ec ? 0 : f(s, ec);
                if (ec == asio::error::would_block || ec == asio::error::try_again) ec.clear();
                return n;
            } else {
                return 0;
            }
        },
        s_);
}

std::size_t Transport::try_write(asio::const_buffer b, std::error_code& ec) {
    // MSG_DONTWAIT: the socket may block (Connection's direct reads); a try never does.
    return on_plain(ec, [&](auto& s, std::error_code& e) { return s.send(b, MSG_DONTWAIT, e); });
}

int Transport::native_fd(bool tls_too) noexcept {
    return std::visit(
        [tls_too](auto& s) -> int {
            using S = std::decay_t<decltype(s)>;
            if constexpr (std::is_same_v<S, std::monostate>)
                return -1;
            else if constexpr (std::is_same_v<S, SharedTls>)
                return tls_too ? s->lowest_layer().native_handle() : -1;
            else
                return s.native_handle();
        },
        s_);
}

int Transport::plain_fd() noexcept {
    return native_fd(false);
}

bool Transport::peer_closed() noexcept {
    int fd = native_fd(true);
    if (fd < 0) return false;
    pollfd p{.fd = fd, .events = POLLIN | POLLRDHUP, .revents = 0};
    return ::poll(&p, 1, 0) > 0 && p.revents != 0;
}

void Transport::close_stream() noexcept {
    std::error_code ignored;
    std::visit(
        [&](auto& s) {
            using S = std::decay_t<decltype(s)>;
            if constexpr (std::is_same_v<S, SharedTls>) {
                // Its aborted operations hold it; the last of them frees it.
                s->lowest_layer().close(ignored);
            } else if constexpr (!std::is_same_v<S, std::monostate>)
                s.close(ignored);
        },
        s_);
    s_ = std::monostate{};
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

}  // namespace deadbolt::detail
