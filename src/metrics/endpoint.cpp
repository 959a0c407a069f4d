// The /metrics endpoint (deadbolt::metrics::Endpoint): civetweb's server, which answers each
// GET with a registry's or an exporter's text at that moment.
#include <civetweb.h>
#include <fmt/format.h>

#include <charconv>
#include <mutex>

#include "deadbolt/error.hpp"
#include "deadbolt/metrics.hpp"

namespace deadbolt::detail {

class MetricsServer {
  public:
    MetricsServer(std::function<std::string()> text, std::string listen);
    ~MetricsServer() {
        if (ctx_ != nullptr) mg_stop(ctx_);
    }
    MetricsServer(const MetricsServer&) = delete;
    MetricsServer& operator=(const MetricsServer&) = delete;
    std::uint16_t port() const { return port_; }

  private:
    static int serve(mg_connection* conn, void* self);

    std::function<std::string()> text_;
    std::string listen_;
    mg_context* ctx_ = nullptr;
    std::uint16_t port_ = 0;
};

MetricsServer::MetricsServer(std::function<std::string()> text, std::string listen)
    : text_(std::move(text)), listen_(std::move(listen)) {
    static std::once_flag once;
    std::call_once(once, [] { mg_init_library(0); });
    const char* options[] = {"listening_ports",   listen_.c_str(), "num_threads", "2",
                             "enable_keep_alive", "yes",           nullptr};
    mg_callbacks callbacks{};
    ctx_ = mg_start(&callbacks, this, options);
    if (ctx_ == nullptr)
        throw ConnectionError(make_error_code(errc::connect_failed),
                              fmt::format("metrics: cannot listen on {} (in use, or not this "
                                          "host's address): pick another --listen",
                                          listen_));
    mg_set_request_handler(ctx_, "/metrics$", &MetricsServer::serve, this);
    mg_server_port ports[1] = {};
    if (mg_get_server_ports(ctx_, 1, ports) >= 1) port_ = static_cast<std::uint16_t>(ports[0].port);
}

int MetricsServer::serve(mg_connection* conn, void* self) {
    try {
        const std::string body = static_cast<MetricsServer*>(self)->text_();
        mg_send_http_ok(conn, metrics::Registry::kContentType, static_cast<long long>(body.size()));
        mg_write(conn, body.data(), body.size());
        return 200;
    } catch (const std::exception& ex) {
        mg_send_http_error(conn, 500, "%s", ex.what());
        return 500;
    }
}

}  // namespace deadbolt::detail

namespace deadbolt::metrics {
namespace {

// host:port with a port of digits (0: any free one).
bool valid_listen(std::string_view listen) {
    auto colon = listen.rfind(':');
    if (colon == std::string_view::npos || colon == 0) return false;
    std::string_view port = listen.substr(colon + 1);
    unsigned value = 0;
    auto [p, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
    return ec == std::errc{} && p == port.data() + port.size() && value <= 65535;
}

}  // namespace

Endpoint::Endpoint(const Registry& registry, std::string_view listen)
    : Endpoint([registry] { return registry.text(); }, listen) {}

Endpoint::Endpoint(const Exporter& exporter, std::string_view listen)
    : Endpoint([exporter] { return exporter.text(); }, listen) {}

Endpoint::Endpoint(std::function<std::string()> text, std::string_view listen) {
    if (!valid_listen(listen))
        throw UsageError(make_error_code(errc::invalid_argument),
                         fmt::format("metrics: '{}' is not HOST:PORT (e.g. 127.0.0.1:9464, or "
                                     "port 0 for any free one)",
                                     listen));
    server_ = std::make_unique<detail::MetricsServer>(std::move(text), std::string(listen));
}

Endpoint::~Endpoint() = default;

std::uint16_t Endpoint::port() const noexcept {
    return server_->port();
}

}  // namespace deadbolt::metrics
