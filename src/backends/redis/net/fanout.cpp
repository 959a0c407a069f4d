#include "backends/redis/net/fanout.hpp"

namespace deadbolt::detail {

struct Fanout::Round {
    std::mutex m;
    std::condition_variable cv;
    std::size_t left;
};

Fanout::~Fanout() {
    {
        std::lock_guard lk(m_);
        stopping_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_) t.join();
}

void Fanout::run(std::size_t n, const std::function<void(std::size_t)>& job) {
    if (n == 0) return;
    Round round{{}, {}, n - 1};
    if (n > 1) {
        std::lock_guard lk(m_);
        for (std::size_t i = 1; i < n; ++i) tasks_.push_back({&job, i, &round});
        // Every queued task gets a thread now: a task waiting for a busy thread would add a
        // whole node round trip to this round.
        while (idle_ < tasks_.size()) {
            threads_.emplace_back([this] { work(); });
            ++idle_;
        }
    }
    for (std::size_t i = 1; i < n; ++i) cv_.notify_one();  // one idle thread per task
    job(0);
    std::unique_lock lk(round.m);
    round.cv.wait(lk, [&] { return round.left == 0; });
}

void Fanout::work() {
    std::unique_lock lk(m_);
    for (;;) {
        cv_.wait(lk, [&] { return stopping_ || !tasks_.empty(); });
        if (tasks_.empty()) return;  // stopping
        Task t = tasks_.front();
        tasks_.pop_front();
        --idle_;
        lk.unlock();
        (*t.job)(t.index);
        {
            std::lock_guard rl(t.round->m);
            if (--t.round->left == 0) t.round->cv.notify_one();
        }
        lk.lock();
        ++idle_;
    }
}

}  // namespace deadbolt::detail
