// Fanout: runs one job per server at once and waits for all of them (Redlock's parallel
// rounds). Connection::exec blocks its caller, so parallelism needs threads: the caller runs
// job 0 itself and idle pool threads run the rest. The pool grows when every thread is busy
// (many callers fanning out at once must not queue behind one another: each Connection
// pipelines its concurrent callers) and its threads live as long as the Fanout.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace deadbolt::detail {

class Fanout {
  public:
    Fanout() = default;
    ~Fanout();
    Fanout(const Fanout&) = delete;
    Fanout& operator=(const Fanout&) = delete;

    /// Calls job(i) for every i in [0, n) concurrently and returns when all have returned.
    /// job must not throw (it runs on pool threads, where nobody could catch it).
    void run(std::size_t n, const std::function<void(std::size_t)>& job);

  private:
    struct Round;
    struct Task {
        const std::function<void(std::size_t)>* job;
        std::size_t index;
        Round* round;
    };
    void work();

    std::mutex m_;
    std::condition_variable cv_;
    std::deque<Task> tasks_;
    std::size_t idle_ = 0;
    bool stopping_ = false;
    std::vector<std::thread> threads_;
};

}  // namespace deadbolt::detail
