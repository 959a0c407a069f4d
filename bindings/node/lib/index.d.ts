// Type declarations of deadbolt for Node.js (lib/index.js). Times are milliseconds.

/** A lock's options (camelCase forms of the C++ MutexOptions). */
export interface LockOptions {
  /** The lease's time to live, renewed while held unless autoRenew is false. */
  ttl?: number;
  autoRenew?: boolean;
  renewEvery?: number;
  /** Give the lock up after holding it this long. */
  maxHold?: number;
  lockDelay?: number;
  waitJitter?: number;
  handoffGrace?: number;
  waiterTtl?: number;
  /** Called (on the event loop) when a lease of this lock is lost. */
  onLost?: ((name: string | Buffer, error: LockLostError | DeadboltError) => void) | null;
}

/** How one acquisition waits. */
export interface WaitOptions {
  /** Give up after this many ms (0: one attempt); absent: wait as long as it takes. */
  timeout?: number;
  /** Aborting it ends the wait, which rejects with signal.reason. */
  signal?: AbortSignal;
}

/** connect()'s options. */
export interface ClientOptions {
  connectTimeout?: number;
  commandTimeout?: number;
  keyPrefix?: string;
  username?: string;
  password?: string;
  keepalive?: boolean;
  tlsCaFile?: string;
  tlsCertFile?: string;
  tlsKeyFile?: string;
  tlsSni?: string;
  tlsVerify?: boolean;
  /** How long deadbolt's event loop spins for more work after a burst (ms, fractions allowed). */
  loopSpin?: number;
}

export interface NamedFence { name: string | Buffer; fence: number; }

/** One holding of a lock. */
export class Lease implements AsyncDisposable {
  private constructor();
  readonly name: string | Buffer;
  readonly token: string;
  /** Greater than every earlier holding's fence of this name. */
  readonly fence: number;
  readonly fences: NamedFence[];
  /** Until then (performance.now()'s clock) this process may trust it holds the lock. */
  readonly validUntil: number;
  readonly valid: boolean;
  readonly lost: boolean;
  readonly held: boolean;
  /** Aborts, with a LockLostError as its reason, when the lease is lost. */
  readonly signal: AbortSignal;
  release(): Promise<void>;
  extend(ttl: number): Promise<void>;
  isCurrent(): Promise<boolean>;
  putIfCurrent(key: string | Buffer, value: string | Buffer): Promise<boolean>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** A lock of one kind on one name (or names); acquire it as often as needed. */
export class Lock {
  protected constructor();
  readonly name: string | Buffer | Array<string | Buffer>;
  acquire(options?: WaitOptions): Promise<Lease>;
  /** One attempt: null when someone else holds it. */
  tryAcquire(): Promise<Lease | null>;
  /** Runs fn holding the lock and releases after; rejects with LockLostError if the lease
   *  was lost while fn ran (and fn did not throw). */
  using<T>(fn: (signal: AbortSignal, lease: Lease) => Promise<T> | T, options?: WaitOptions): Promise<T>;
}

/** Permits across processes: at most `permits` holders at once, each a Lease. */
export class Semaphore extends Lock {
  readonly permits: number;
  available(): Promise<number>;
}

/** A count that processes wait to reach zero. */
export class Latch {
  private constructor();
  readonly name: string | Buffer;
  /** Sets the count if none is set; resolves whether this call did. */
  trySetCount(count: number, ttl?: number): Promise<boolean>;
  /** Resolves whether this reached zero. */
  countDown(): Promise<boolean>;
  count(): Promise<number>;
  /** Resolves whether the count reached zero in time. */
  wait(options?: WaitOptions): Promise<boolean>;
}

export class RWLock {
  private constructor();
  readonly name: string | Buffer;
  read(): Lock;
  write(): Lock;
}

export class Election {
  private constructor();
  readonly name: string | Buffer;
  /** A Lock whose lease is the term in which value leads. */
  campaign(value: string | Buffer): Lock;
}

export interface RateDecision { allowed: boolean; retryIn: number; remaining: number; }
export interface RateLimit { rate?: number; per: number; burst?: number; }

export class RateLimiter {
  private constructor();
  readonly name: string | Buffer;
  tryAcquire(n?: number): Promise<RateDecision>;
  /** Resolves false when the timeout cannot be met. An abort that comes as the tokens are
   *  taken resolves true (tokens are not given back). */
  acquire(n?: number, options?: WaitOptions): Promise<boolean>;
  available(): Promise<number>;
}

export interface Holder { host: string; pid: number; ttl: number; client: string; since?: Date; }
export interface LockStatus {
  held: boolean; ttl: number; lastFence: number; kind: string; holders: number;
  waiters: number; permits: number; writerWaiting: boolean; heldBy: Holder[]; value: string;
  sessionTimeout: number;
}
export interface FencedResult { accepted: boolean; highest: number; version: number; staleFence: boolean; }

/** A connection to one engine, chosen by the URL's scheme. */
export class Client {
  private constructor();
  static urlForms(): string[];
  mutex(name: string | Buffer, options?: LockOptions): Lock;
  fairMutex(name: string | Buffer, options?: LockOptions): Lock;
  rwlock(name: string | Buffer, options?: LockOptions): RWLock;
  multiLock(names: Array<string | Buffer>, options?: LockOptions): Lock;
  election(name: string | Buffer, options?: LockOptions): Election;
  rateLimiter(name: string | Buffer, limit: RateLimit): RateLimiter;
  semaphore(name: string | Buffer, permits: number, options?: LockOptions): Semaphore;
  latch(name: string | Buffer): Latch;
  /** One use of key per window ms (up to burst after a quiet spell), across every process. */
  throttle(key: string | Buffer, options: { window: number; burst?: number }): Promise<RateDecision>;
  /** Runs fn holding the mutex name (node-redlock's using()). */
  using<T>(name: string | Buffer, options: LockOptions & WaitOptions,
           fn: (signal: AbortSignal, lease: Lease) => Promise<T> | T): Promise<T>;
  using<T>(name: string | Buffer, fn: (signal: AbortSignal, lease: Lease) => Promise<T> | T): Promise<T>;
  status(name: string | Buffer): Promise<LockStatus>;
  list(pattern?: string, options?: { foreign?: boolean }): Promise<Array<{ name: string | Buffer; status: LockStatus }>>;
  forceUnlock(name: string | Buffer): Promise<string>;
  fencedSet(key: string | Buffer, value: string | Buffer, fence: number | bigint): Promise<FencedResult>;
  fencedCas(key: string | Buffer, value: string | Buffer, fence: number | bigint, version: number | bigint): Promise<FencedResult>;
  fencedGet(key: string | Buffer): Promise<{ value: Buffer | null; version: number }>;
  ping(): Promise<void>;
  lockKey(name: string | Buffer): Buffer;
  readonly warnings: string[];
}

export function connect(url: string, options?: ClientOptions): Promise<Client>;
export function urlForms(): string[];

export class DeadboltError extends Error {
  /** The C++ library's code, e.g. 'not_acquired'. */
  readonly code: string;
  /** Whether trying again can help. */
  readonly retryable: boolean;
}
export class UsageError extends DeadboltError {}
export class ConnectionError extends DeadboltError {}
export class ServerError extends DeadboltError {}
export class LockError extends DeadboltError {}
export class NotAcquiredError extends LockError {}
export class LockLostError extends LockError {}
export class CancelledError extends LockError {}
