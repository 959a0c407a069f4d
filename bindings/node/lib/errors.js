'use strict';
// deadbolt's errors, one class per kind of problem, each carrying the C++ library's code
// (`code`, e.g. 'not_acquired') and whether trying again can help (`retryable`).

/** Every error deadbolt raises. */
class DeadboltError extends Error {
  constructor(message, code = '', retryable = false) {
    super(message);
    this.name = new.target.name;
    this.code = code;
    this.retryable = retryable;
  }
}
/** A bad argument, option, URL or name: fix the call. */
class UsageError extends DeadboltError {}
/** The engine could not be reached or the connection broke; often retryable. */
class ConnectionError extends DeadboltError {}
/** The engine answered with an error (rights, wrong type, foreign data). */
class ServerError extends DeadboltError {}
/** A lock was not obtained or not held. */
class LockError extends DeadboltError {}
/** The wait ended (its timeout passed) without the lock. */
class NotAcquiredError extends LockError {}
/** A lease was no longer ours: expired, deleted or taken. */
class LockLostError extends LockError {}
/** The wait was cancelled. */
class CancelledError extends LockError {}

const classes = {
  DeadboltError, UsageError, ConnectionError, ServerError, LockError, NotAcquiredError,
  LockLostError, CancelledError,
};

/** What the native addon calls to make its errors. */
function makeError(className, message, code, retryable) {
  return new (classes[className] || DeadboltError)(message, code, retryable);
}

module.exports = { ...classes, makeError };
