#include "steered_clock.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <ctime>
#include <stdexcept>

#include "clock_shim.h"
#include "redis_server.hpp"

namespace deadbolt::torture {
std::int64_t SteeredClock::real_ns() const {
    timespec ts{};
    clock_gettime(base_, &ts);
    return std::int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

SteeredClock::SteeredClock(std::string path, clockid_t base) : path_(std::move(path)), base_(base) {
    int fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || ::ftruncate(fd, sizeof(deadbolt_shim_clock)) != 0)
        throw std::runtime_error("SteeredClock: cannot create " + path_);
    void* m =
        ::mmap(nullptr, sizeof(deadbolt_shim_clock), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ::close(fd);
    if (m == MAP_FAILED) throw std::runtime_error("SteeredClock: cannot map " + path_);
    page_ = static_cast<deadbolt_shim_clock*>(m);
    update([this](deadbolt_shim_clock& c) {
        c.anchor_real_ns = c.anchor_wall_ns = real_ns();
        c.rate = 1.0;
    });
}

SteeredClock::~SteeredClock() {
    ::munmap(page_, sizeof(deadbolt_shim_clock));
}

std::vector<std::string> SteeredClock::env(const std::string& shim_dir) const {
    std::string dir = shim_dir.empty() ? deadbolt::test::self_dir() : shim_dir;
    return {"LD_PRELOAD=" + dir + "/libdeadbolt_clock_shim.so",
            std::string(DEADBOLT_CLOCK_FILE_ENV) + "=" + path_};
}

template <class F>
void SteeredClock::update(F&& f) {
    // The seqlock's writer side: odd while changing, so readers retry instead of mixing.
    __atomic_store_n(&page_->seq, page_->seq + 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    f(*page_);
    __atomic_store_n(&page_->seq, page_->seq + 1, __ATOMIC_RELEASE);
}

void SteeredClock::jump(std::chrono::milliseconds forward) {
    update([&](deadbolt_shim_clock& c) { c.anchor_wall_ns += forward.count() * 1000000; });
}

void SteeredClock::set_rate(double rate) {
    update([&](deadbolt_shim_clock& c) {
        auto now = real_ns();
        c.anchor_wall_ns += static_cast<std::int64_t>(double(now - c.anchor_real_ns) * c.rate);
        c.anchor_real_ns = now;
        c.rate = rate;
    });
}

}  // namespace deadbolt::torture
