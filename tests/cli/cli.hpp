// The CLI black-box suite (ctest label cli): the built deadbolt binary run as a user runs it,
// against real servers of every engine an item applies to (the conformance suites' backends).
// Each test asserts what a user sees: the exit code and the words of the message.
#pragma once

#include <gtest/gtest.h>

#include <future>
#include <string>
#include <vector>

#include "cli_run.hpp"
#include "contract.hpp"

namespace deadbolt::clitest {

using namespace conformance;

/// The engines this build tests, one server of each (Redis's topologies have suites of their
/// own); an item an engine does not offer is checked to be refused there, by the backend's
/// k-flags (conformance/backends.hpp).
using Engines = ::testing::Types<OneServer
#ifdef DEADBOLT_TEST_ETCD
                                 ,
                                 conformance::Etcd
#endif
#ifdef DEADBOLT_TEST_PG
                                 ,
                                 conformance::Pg
#endif
#ifdef DEADBOLT_TEST_MY
                                 ,
                                 conformance::My
#endif
#ifdef DEADBOLT_TEST_ZK
                                 ,
                                 conformance::Zk
#endif
#ifdef DEADBOLT_TEST_MC
                                 ,
                                 conformance::Mc
#endif
#ifdef DEADBOLT_TEST_FILE
                                 ,
                                 conformance::File
#endif
                                 >;

/// What one run of the CLI gave: its exit code, and stdout and stderr together.
using Result = test::CliResult;

/// Runs `deadbolt args...` with DEADBOLT_URL=url and env (NAME=value entries) added.
Result deadbolt(const std::string& url, std::vector<std::string> args,
                std::vector<std::string> env = {});
/// The same on a thread of its own, for runs that hold a lock while the test acts.
std::future<Result> deadbolt_async(const std::string& url, std::vector<std::string> args,
                                   std::vector<std::string> env = {});

/// Waits (up to 30 s) until name is held on the engine at url; a failure of the test if not.
void until_held(const std::string& url, const std::string& name);

/// True when text contains every one of words (a message's gist, not its punctuation).
::testing::AssertionResult says(const Result& r, std::initializer_list<const char*> words);

/// A name of this test's own (engines are shared by a suite's tests).
std::string own_name(const std::string& what);

/// One engine per process, shared by a suite's tests, as the conformance suites do.
template <class E>
class EveryEngine : public ::testing::Test {
  protected:
    E& engine = shared<E>();
    std::string url() const { return engine.url(); }
    Result cli(std::vector<std::string> args, std::vector<std::string> env = {}) {
        return deadbolt(url(), std::move(args), std::move(env));
    }
};

}  // namespace deadbolt::clitest
