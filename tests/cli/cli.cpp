#include "cli.hpp"

#include <thread>

#include "redis_server.hpp"

namespace deadbolt::clitest {

Result deadbolt(const std::string& url, std::vector<std::string> args,
                std::vector<std::string> env) {
    return test::run_cli(url, std::move(args), std::move(env));
}

void until_held(const std::string& url, const std::string& name) {
    using namespace std::chrono_literals;
    auto c = Client::connect(url);
    for (int i = 0; i < 3000 && !c.status(name).held; ++i) std::this_thread::sleep_for(10ms);
    ASSERT_TRUE(c.status(name).held) << name;
}

std::future<Result> deadbolt_async(const std::string& url, std::vector<std::string> args,
                                   std::vector<std::string> env) {
    return std::async(std::launch::async, [url, args = std::move(args), env = std::move(env)] {
        return deadbolt(url, args, env);
    });
}

::testing::AssertionResult says(const Result& r, std::initializer_list<const char*> words) {
    for (const char* w : words)
        if (r.out.find(w) == std::string::npos)
            return ::testing::AssertionFailure()
                   << "exit " << r.rc << ", output lacks '" << w << "':\n"
                   << r.out;
    return ::testing::AssertionSuccess() << r.out;
}

std::string own_name(const std::string& what) {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    return std::string(info->name()) + ":" + what;
}

}  // namespace deadbolt::clitest
