// A real Prometheus (Debian's prometheus package) on a free port, scraping the given targets
// every second, and its query API (tests/prometheus).
#pragma once

#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <cstdint>
#include <fstream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "eventually.hpp"
#include "redis_server.hpp"  // free_port, spawn_logged, run_command
#include "scrape.hpp"

namespace deadbolt::test {

class PrometheusServer {
  public:
    /// Scrapes each (job, port) at 127.0.0.1:port/metrics every second. Fails the test (and
    /// leaves port() answering nothing) when Prometheus is not ready within 60 s.
    explicit PrometheusServer(const std::vector<std::pair<std::string, std::uint16_t>>& targets)
        : port_(free_port()) {
        char t[] = "/tmp/deadbolt-prometheus-XXXXXX";
        const char* made = ::mkdtemp(t);
        if (made == nullptr) return;  // ready() stays false
        dir_ = made;
        std::ofstream config(dir_ + "/prometheus.yml");
        config << "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n";
        for (const auto& [job, port] : targets)
            config << "  - job_name: " << job
                   << "\n    static_configs: [{targets: ['127.0.0.1:" << port << "']}]\n";
        config.close();
        pid_ = spawn_logged(
            {"prometheus", "--config.file=" + dir_ + "/prometheus.yml",
             "--storage.tsdb.path=" + dir_ + "/data",
             "--web.listen-address=127.0.0.1:" + std::to_string(port_), "--log.level=warn"},
            dir_ + "/prometheus.log");
        ready_ = eventually(
            [&] { return http_get(port_, "/-/ready").find(" 200 ") != std::string::npos; },
            std::chrono::seconds(60));
    }
    ~PrometheusServer() {
        if (pid_ > 0) {
            ::kill(pid_, SIGTERM);
            ::waitpid(pid_, nullptr, 0);
        }
        if (!dir_.empty()) run_command({"rm", "-rf", dir_});
    }
    PrometheusServer(const PrometheusServer&) = delete;
    PrometheusServer& operator=(const PrometheusServer&) = delete;

    bool ready() const { return ready_; }
    /// The first value of an instant PromQL query now; nullopt when it has none (yet).
    std::optional<double> query(const std::string& promql) const {
        std::string encoded;
        for (unsigned char c : promql) {
            if (std::isalnum(c) || c == '_' || c == '.' || c == '-' || c == '~') {
                encoded += static_cast<char>(c);
            } else {
                char hex[4];
                std::snprintf(hex, sizeof hex, "%%%02X", c);
                encoded += hex;
            }
        }
        auto response = http_get(port_, "/api/v1/query?query=" + encoded);
        auto body = response.find("\r\n\r\n");
        if (body == std::string::npos) return std::nullopt;
        auto j = nlohmann::json::parse(response.substr(body + 4), nullptr, false);
        if (j.is_discarded() || j.value("status", "") != "success") return std::nullopt;
        const auto& result = j["data"]["result"];
        if (!result.is_array() || result.empty()) return std::nullopt;
        return std::stod(result[0]["value"][1].get<std::string>());
    }
    /// Its log (for a failure's message).
    std::string log() const {
        std::ifstream in(dir_ + "/prometheus.log");
        return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    }

  private:
    std::uint16_t port_;
    std::string dir_;
    pid_t pid_ = 0;
    bool ready_ = false;
};

}  // namespace deadbolt::test
