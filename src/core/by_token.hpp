// ByToken: what a claim handed over, by the token it was for (Claim::holding finds it
// there). An acquisition almost always hands over for one token: that one sits in a slot
// whose token's room is reused from one acquisition to the next (a kept claim:
// SpareClaim); another token's goes to a map.
#pragma once

#include <map>
#include <memory>
#include <string>

namespace deadbolt::detail {

template <class H>
class ByToken {
  public:
    /// h is what token's attempt handed over, in place of what it handed over before.
    void put(const std::string& token, std::shared_ptr<H> h) {
        if (!first_ || first_token_ == token) {
            first_token_ = token;
            first_ = std::move(h);
        } else {
            rest_[token] = std::move(h);
        }
    }
    /// What token's attempt handed over; null when nothing.
    std::shared_ptr<H> find(const std::string& token) const {
        if (first_ && first_token_ == token) return first_;
        auto it = rest_.find(token);
        return it == rest_.end() ? nullptr : it->second;
    }
    /// Forgets them all (the slot's room stays). Never throws.
    void clear() noexcept {
        first_.reset();
        rest_.clear();
    }

  private:
    std::string first_token_;
    std::shared_ptr<H> first_;
    std::map<std::string, std::shared_ptr<H>> rest_;
};

}  // namespace deadbolt::detail
