// The waits that JS may cancel (an AbortSignal's abort), by the id the package gave each.
#pragma once

#include <cstdint>
#include <stop_token>
#include <unordered_map>

namespace deadbolt::node {

/// Used on the JS thread only; shared (by pointer) with the completions that close ids.
class Cancels {
  public:
    /// The stop token of wait id; an empty token (never stops) for id 0.
    std::stop_token open(std::uint32_t id) {
        return id == 0 ? std::stop_token{} : m_[id].get_token();
    }
    /// Forgets id once its wait has ended.
    void close(std::uint32_t id) { m_.erase(id); }
    /// Ends wait id if it still waits.
    void cancel(std::uint32_t id) {
        auto it = m_.find(id);
        if (it != m_.end()) it->second.request_stop();
    }

  private:
    std::unordered_map<std::uint32_t, std::stop_source> m_;
};

}  // namespace deadbolt::node
