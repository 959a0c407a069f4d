// ReadBound: a blocking socket's receive timeout follows the deadlines it is given, set as
// rarely as it can be (a system call each time), and never longer than what is left.
#include "core/read_bound.hpp"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>

using namespace std::chrono_literals;
using deadbolt::detail::ReadBound;

namespace {

class Pair {
  public:
    Pair() { EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds_), 0); }
    ~Pair() {
        ::close(fds_[0]);
        ::close(fds_[1]);
    }
    Pair(const Pair&) = delete;
    Pair& operator=(const Pair&) = delete;
    int fd() const { return fds_[0]; }
    // The receive timeout set on the socket now.
    std::chrono::microseconds timeout() const {
        timeval tv{};
        socklen_t len = sizeof tv;
        EXPECT_EQ(::getsockopt(fds_[0], SOL_SOCKET, SO_RCVTIMEO, &tv, &len), 0);
        return std::chrono::seconds(tv.tv_sec) + std::chrono::microseconds(tv.tv_usec);
    }
    // One tick of the kernel's clock for timeouts: it keeps them in ticks, rounded up, so the
    // shortest one set reads back as a tick (1 ms to 10 ms, after the kernel's HZ).
    std::chrono::microseconds tick() const {
        timeval tv{.tv_sec = 0, .tv_usec = 1};
        EXPECT_EQ(::setsockopt(fds_[1], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv), 0);
        socklen_t len = sizeof tv;
        EXPECT_EQ(::getsockopt(fds_[1], SOL_SOCKET, SO_RCVTIMEO, &tv, &len), 0);
        return std::chrono::seconds(tv.tv_sec) + std::chrono::microseconds(tv.tv_usec);
    }
    // The timeout set now is want, or up to a tick more.
    ::testing::AssertionResult about(std::chrono::microseconds want) const {
        auto got = timeout();
        if (got >= want && got <= want + tick()) return ::testing::AssertionSuccess();
        return ::testing::AssertionFailure()
               << "the timeout is " << got.count() << " us, not about " << want.count() << " us";
    }
    // Clears it, so that a later look tells whether fit set it again.
    void clear() const {
        timeval tv{};
        EXPECT_EQ(::setsockopt(fds_[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv), 0);
    }

  private:
    int fds_[2] = {-1, -1};
};

}  // namespace

TEST(ReadBound, TheTimeoutIsAtMostWhatIsLeftAndKeptForLikeDeadlines) {
    Pair p;
    ReadBound b;
    ASSERT_TRUE(b.fit(p.fd(), 2s));
    EXPECT_TRUE(p.about(1s));
    p.clear();
    ASSERT_TRUE(b.fit(p.fd(), 1900ms));  // the next request's deadline, as far off
    EXPECT_EQ(p.timeout(), 0us) << "set again for a like deadline";
    ASSERT_TRUE(b.fit(p.fd(), 500ms));  // shorter than the bound: lowered
    EXPECT_TRUE(p.about(250ms));
}

TEST(ReadBound, AShortWaitNearADeadlineDoesNotBoundTheLaterOnes) {
    Pair p;
    ReadBound b;
    ASSERT_TRUE(b.fit(p.fd(), -5ms));  // past the deadline: still a short wait, never none
    EXPECT_TRUE(p.about(1ms));
    ASSERT_TRUE(b.fit(p.fd(), 10s));  // a 1 ms bound would wake a long wait 10,000 times
    EXPECT_TRUE(p.about(5s));
}

TEST(ReadBound, ANewSocketIsSetAfresh) {
    Pair p;
    ReadBound b;
    ASSERT_TRUE(b.fit(p.fd(), 2s));
    Pair q;
    b.forget();
    ASSERT_TRUE(b.fit(q.fd(), 2s));
    EXPECT_TRUE(q.about(1s));
}

TEST(ReadBound, ASocketThatTakesNoTimeoutIsAFailure) {
    ReadBound b;
    EXPECT_FALSE(b.fit(-1, 2s));
}
