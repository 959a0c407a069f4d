// The public API's shape: every factory hands out a value, every handle moves, no public
// constructor takes an internal type, and no lock is configured by inheriting Mutex.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <type_traits>

#include "deadbolt/deadbolt.hpp"

namespace {

using deadbolt::Client;
using Impl = std::shared_ptr<deadbolt::detail::ClientImpl>;

static_assert(std::is_same_v<decltype(std::declval<const Client&>().mutex("n")), deadbolt::Mutex>);
static_assert(
    std::is_same_v<decltype(std::declval<const Client&>().fair_mutex("n")), deadbolt::FairMutex>);
static_assert(std::is_same_v<decltype(std::declval<const Client&>().reentrant_mutex("n")),
                             deadbolt::ReentrantMutex>);
static_assert(
    std::is_same_v<decltype(std::declval<const Client&>().rwlock("n")), deadbolt::RWLock>);
static_assert(
    std::is_same_v<decltype(std::declval<const Client&>().semaphore("n", 2)), deadbolt::Semaphore>);
static_assert(std::is_same_v<decltype(std::declval<const Client&>().permit_semaphore("n", 2)),
                             deadbolt::PermitExpirableSemaphore>);
static_assert(std::is_same_v<decltype(std::declval<const Client&>().multi_lock({"a", "b"})),
                             deadbolt::MultiLock>);
static_assert(std::is_same_v<decltype(std::declval<const Client&>().election("n")),
                             deadbolt::LeaderElection>);
static_assert(
    std::is_same_v<decltype(std::declval<const Client&>().latch("n")), deadbolt::CountDownLatch>);

template <class T>
constexpr bool kMoves = std::is_move_constructible_v<T>;
static_assert(kMoves<deadbolt::Mutex> && kMoves<deadbolt::FairMutex> &&
              kMoves<deadbolt::ReentrantMutex> && kMoves<deadbolt::RWLock> &&
              kMoves<deadbolt::Semaphore> && kMoves<deadbolt::PermitExpirableSemaphore> &&
              kMoves<deadbolt::MultiLock> && kMoves<deadbolt::LeaderElection> &&
              kMoves<deadbolt::CountDownLatch> && kMoves<deadbolt::RateLimiter> &&
              kMoves<deadbolt::Lease>);

static_assert(!std::is_constructible_v<deadbolt::Mutex, Impl, std::string, deadbolt::MutexOptions>);
static_assert(
    !std::is_constructible_v<deadbolt::RWLock, Impl, std::string, deadbolt::MutexOptions>);
static_assert(
    !std::is_constructible_v<deadbolt::Semaphore, Impl, std::string, int, deadbolt::MutexOptions>);
static_assert(
    !std::is_constructible_v<deadbolt::LeaderElection, Impl, std::string, deadbolt::MutexOptions>);
static_assert(!std::is_constructible_v<deadbolt::CountDownLatch, Impl, std::string>);
// Engines make Clients through detail::ClientAccess, not a public constructor.
static_assert(!std::is_constructible_v<Client, Impl>);
static_assert(
    !std::is_constructible_v<deadbolt::Lease, std::shared_ptr<deadbolt::detail::LeaseState>>);

static_assert(!std::is_base_of_v<deadbolt::Mutex, deadbolt::FairMutex>);
static_assert(!std::is_base_of_v<deadbolt::Mutex, deadbolt::MultiLock>);

}  // namespace

TEST(ApiShape, HoldsAtCompileTime) {
    // The checks above are static_asserts: this file would not compile if the shape broke.
    SUCCEED();
}
