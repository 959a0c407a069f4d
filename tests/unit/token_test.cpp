// Owner tokens name their host and process; status reads them back, and nothing else.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <optional>
#include <set>
#include <thread>

#include "core/token.hpp"

using deadbolt::detail::random_token;
using deadbolt::detail::token_origin;

TEST(Token, NamesThisHostAndProcessAndIsUnique) {
    std::set<std::string> seen;
    for (int i = 0; i < 1000; ++i) EXPECT_TRUE(seen.insert(random_token()).second);
    auto t = random_token();
    auto origin = token_origin(t);
    ASSERT_TRUE(origin);
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    EXPECT_EQ(origin->host, host);
    EXPECT_EQ(origin->pid, getpid());
    // 128 random bits at the end, whatever the host's name.
    EXPECT_EQ(t.substr(t.rfind(':') + 1).find_first_not_of("0123456789abcdef"), std::string::npos);
    EXPECT_EQ(t.size() - t.rfind(':') - 1, 32u);
}

// A lock taken in a thread_local's destructor makes its token as the thread exits, after the
// thread's later thread_locals are gone (the sanitizers' run would see a read of freed room).
TEST(Token, ATokenMadeAsTheThreadExitsStillNamesThisProcess) {
    std::optional<deadbolt::detail::TokenOrigin> late;
    std::thread([&late] {
        struct AtExit {
            std::optional<deadbolt::detail::TokenOrigin>& into;
            ~AtExit() { into = token_origin(random_token()); }
        };
        thread_local AtExit at_exit{late};  // made before the thread's first token
        (void)&at_exit;
        EXPECT_TRUE(token_origin(random_token()));
    }).join();
    ASSERT_TRUE(late);
    EXPECT_EQ(late->pid, getpid());
}

TEST(Token, OriginOfWhatDeadboltDidNotMakeIsUnknown) {
    const std::string hex(32, 'f');
    EXPECT_TRUE(token_origin("web-3:4121:" + hex));
    EXPECT_TRUE(token_origin("web-3:4121:" + hex + ":140234"));  // a reentrant owner's thread
    EXPECT_FALSE(token_origin(hex));                             // redis-py's uuid hex
    EXPECT_FALSE(token_origin(""));
    EXPECT_FALSE(token_origin(":4121:" + hex));
    EXPECT_FALSE(token_origin("web-3::" + hex));
    EXPECT_FALSE(token_origin("web-3:0:" + hex));
    EXPECT_FALSE(token_origin("web-3:-5:" + hex));
    EXPECT_FALSE(token_origin("web-3:41x:" + hex));
    EXPECT_FALSE(token_origin("web-3:4121:" + hex.substr(1)));
    EXPECT_FALSE(token_origin("web-3:4121:" + std::string(32, 'F')));
    EXPECT_FALSE(token_origin("my-service-owner"));  // an owner name the application chose
}

// Random bytes are drawn a page at a time; a forked child must not draw the ones its parent
// draws next (after the parent exits, a reused pid would repeat the parent's tokens).
TEST(Token, AForkedChildDrawsOtherRandomBytesThanItsParent) {
    (void)random_token();  // the pool is filled and in use
    std::array<int, 2> fds{};
    ASSERT_EQ(pipe(fds.data()), 0);
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        auto t = random_token();
        auto hex = t.substr(t.rfind(':') + 1);
        _exit(write(fds[1], hex.data(), hex.size()) == static_cast<ssize_t>(hex.size()) ? 0 : 1);
    }
    close(fds[1]);
    std::string theirs(32, '\0');
    ASSERT_EQ(read(fds[0], theirs.data(), theirs.size()), 32);
    close(fds[0]);
    int status = 0;
    waitpid(child, &status, 0);
    auto mine = random_token();
    EXPECT_NE(mine.substr(mine.rfind(':') + 1), theirs);
    EXPECT_EQ(token_origin(mine)->pid, getpid());
}
