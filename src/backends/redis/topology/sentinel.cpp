#include "backends/redis/topology/sentinel.hpp"

#include <fmt/format.h>

#include "backends/redis/commands.hpp"
#include "backends/redis/net/connection.hpp"
#include "core/background.hpp"

namespace deadbolt::detail {
namespace {

// How often the primary's address is re-checked without a +switch-master message (one lost
// while the sentinel connection was down, or a sentinel other than the first one acting).
constexpr std::chrono::milliseconds kRecheck{1000};
const std::string kSwitchMaster = "+switch-master";

}  // namespace

Sentinel::Sentinel(std::vector<Endpoint> sentinels, std::string master_name)
    : sentinels_(std::move(sentinels)), name_(std::move(master_name)) {}

Sentinel::~Sentinel() = default;

void Sentinel::stop() noexcept {
    Background t;
    {
        std::lock_guard lk(m_);
        stopping_ = true;
        t = std::move(thread_);
    }
    cv_.notify_all();
    try {
        if (events_) events_->poke(kSwitchMaster);  // ends a wait for the next message
    } catch (...) {
        // Poking cannot fail but for memory; the wait then ends at its next re-check.
    }
    t.end();  // the owner may die inside moved()
}

Status Sentinel::discover(std::string& host, std::uint16_t& port) const {
    std::string errors;
    bool unknown = false;
    if (conns_.empty())
        for (const auto& ep : sentinels_) conns_.push_back(std::make_unique<Connection>(ep));
    for (std::size_t i = 0; i < sentinels_.size(); ++i) {
        const auto& ep = sentinels_[i];
        auto& c = *conns_[i];
        Reply r;
        auto deadline = Clock::now() + ep.options.connect_timeout + ep.options.command_timeout;
        Status st = command(c, {"SENTINEL", "get-master-addr-by-name", name_}, r, deadline);
        if (st.ok() && r.type == Reply::Type::array && r.elements.size() == 2 &&
            r.elements[1].type == Reply::Type::string) {
            unsigned long p = 0;
            try {
                p = std::stoul(r.elements[1].str);
            } catch (const std::exception&) {  // garbage: counted as an unexpected answer
            }
            if (p > 0 && p < 65536) {
                host = r.elements[0].str;
                port = static_cast<std::uint16_t>(p);
                return {};
            }
        }
        if (st.ok() && r.is_nil()) {
            unknown = true;
            errors += fmt::format("; {}: does not know '{}'", ep.describe(), name_);
        } else if (st.ok()) {
            errors += fmt::format("; {}: unexpected answer", ep.describe());
        } else {
            errors += fmt::format("; {}: {}", ep.describe(), st.detail);
        }
    }
    if (unknown)
        return Status::error(errc::invalid_argument,
                             fmt::format("no sentinel knows a master named '{}' (check the name "
                                         "in the URL against `sentinel monitor`){}",
                                         name_, errors));
    return Status::error(errc::connect_failed, fmt::format("no sentinel answered{}", errors));
}

void Sentinel::follow(std::string host, std::uint16_t port, Moved moved) {
    host_ = std::move(host);
    port_ = port;
    moved_ = std::move(moved);
    events_ = std::make_unique<Subscriber>(sentinels_.front());
    thread_ = Background([self = shared_from_this()] { self->run(); });
}

void Sentinel::run() {
    std::vector<std::string> channels{kSwitchMaster};
    std::vector<std::uint64_t> seqs{0};
    bool subscribed = false;
    for (;;) {
        {
            std::lock_guard lk(m_);
            if (stopping_) return;
        }
        if (!subscribed) {
            subscribed = events_->subscribe_all(channels, Clock::now() + kRecheck, seqs).ok();
            if (!subscribed) {
                std::unique_lock lk(m_);
                cv_.wait_for(lk, kRecheck, [&] { return stopping_; });
            }
        } else {
            events_->wait_any(channels, seqs, Clock::now() + kRecheck);
        }
        std::string host;
        std::uint16_t port = 0;
        if (!discover(host, port).ok() || (host == host_ && port == port_)) continue;
        host_ = host;
        port_ = port;
        {
            std::lock_guard lk(m_);
            if (stopping_) return;
        }
        moved_(host, port);
    }
}

}  // namespace deadbolt::detail
