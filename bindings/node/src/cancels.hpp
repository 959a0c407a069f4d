// The waits of one environment, by the id the package gave each: JS may cancel one (an
// AbortSignal's abort), and the environment's end (a worker terminated) cancels them all, so
// no wait goes on for a thread that is gone.
#pragma once

#include <napi.h>

#include <cstdint>
#include <memory>
#include <stop_token>
#include <unordered_map>
#include <utility>

namespace deadbolt::node {

/// Used on the JS thread only; one per environment (Addon), shared (by pointer) with the
/// completions that close ids.
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
    /// Ends every wait still waiting (the environment is going).
    void cancel_all() {
        for (auto& [id, stop] : m_) stop.request_stop();
    }

  private:
    std::unordered_map<std::uint32_t, std::stop_source> m_;
};

/// A wait's id from JS (0, not cancellable, when it is not a number).
inline std::uint32_t wait_id(const Napi::Value& v) {
    return v.IsNumber() ? v.As<Napi::Number>().Uint32Value() : 0U;
}

/// The stop token of wait id of cancels, and what forgets it once the wait ended (offload's
/// after): the pair a cancellable offloaded wait needs.
inline auto cancellable(const std::shared_ptr<Cancels>& cancels, std::uint32_t id) {
    return std::pair{cancels->open(id), [cancels, id] { cancels->close(id); }};
}

}  // namespace deadbolt::node
