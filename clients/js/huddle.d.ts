// Types of huddle.js (the Huddle JavaScript SDK). Field names are the wire's (protocol.md).

export type Position = { epoch: string; offset: number };
export type User = { username: string; email: string };

/** localStorage, React Native's AsyncStorage, or anything with these three methods. */
export interface HuddleStorage {
  getItem(key: string): string | null | Promise<string | null>;
  setItem(key: string, value: string): void | Promise<void>;
  removeItem(key: string): void | Promise<void>;
}

export interface HuddleClientOptions {
  /** ws:// or wss:// URL of a server (`/v1` is added when missing). */
  url?: string;
  /** Several servers: tried in turn when a connection attempt fails. */
  urls?: string[];
  /** A WHATWG WebSocket class; default `globalThis.WebSocket`. */
  WebSocket?: typeof WebSocket;
  /** A session token to present (in the `huddle.auth.TOKEN` subprotocol). */
  token?: string;
  /** Keeps the token and each channel's last delivered position. */
  storage?: HuddleStorage;
  /** Prefix of the storage keys; default `huddle.`. */
  storageKey?: string;
  /** Exponential backoff with full jitter; defaults 250 ms, 30 s, forever. */
  reconnect?: { initialDelayMs?: number; maxDelayMs?: number; maxAttempts?: number };
  /** Ping after this much silence, drop the connection after that much; defaults 20 s, 35 s. */
  heartbeat?: { pingAfterMs?: number; deadAfterMs?: number };
  /** How long a sent request waits for its reply; default 15 s. */
  requestTimeoutMs?: number;
  /** Requests that may wait for a connection; default 1000. */
  maxQueuedRequests?: number;
  random?: () => number;
}

export type ClientState = 'idle' | 'connecting' | 'signing_in' | 'ready' | 'waiting' | 'stopped';

export interface PublicationEvent {
  event: 'publication'; channel: string; epoch: string; offset: number; type: string;
  from: string | null; data: unknown; time: number; client_id?: string;
}
export interface Post {
  id: number; author: string; author_display_name?: string; author_avatar?: string; text: string; activity: string | null; at: number | null; time: number;
  likes: number; liked: boolean; comments: number; recent_comments: Comment[];
}
export interface Comment { id: number; author: string; author_display_name?: string; author_avatar?: string; text: string; time: number }
export interface PostEvent { event: 'post'; post: Post; time: number }
export interface LikeEvent { event: 'like'; post: number; author: string; user: string; liked: boolean; likes: number; time: number }
export interface CommentEvent { event: 'comment'; post: number; author: string; comment: Comment; comments: number; time: number }
export interface PostDeletedEvent { event: 'post_deleted'; post: number; author: string; time: number }
/** An operator removed a comment; `comments` is the post's count now. */
export interface CommentRemovedEvent { event: 'comment_removed'; post: number; author: string; comment: number; comments: number; time: number }
export type FeedEvent = PostEvent | LikeEvent | CommentEvent | PostDeletedEvent | CommentRemovedEvent;
export interface MemoryPosition { lat: number; lon: number }
export interface Point { id: number; time: number; position: MemoryPosition | null; place_name: string; note: string; photos: string[] }
export interface Memory {
  id: number; title: string; date: string; place_name: string; position: MemoryPosition | null;
  created_at: number; updated_at: number; point_count: number; points?: Point[];
}
export interface PlaceDecision { place: string; place_id?: number; since: number | null; changed?: boolean; ignored?: boolean }

export interface HuddleEvents {
  publication: PublicationEvent;
  /** A publication of a subscribed channel became a tombstone (an operator's removal, a deleted account): drop it. */
  publication_removed: { event: 'publication_removed'; channel: string; epoch: string; offset: number; time: number };
  /** A friend (or the user, on another device) changed their profile: the whole profile now. */
  profile: { event: 'profile'; user: string; display_name: string | null; avatar: string | null; time: number };
  presence: { event: 'presence'; user: string; online: boolean; time: number };
  typing: { event: 'typing'; channel: string; user: string; time: number };
  session: { event: 'session'; user: User; expires_at: number; time: number };
  auth_failed: { event: 'auth_failed'; error: { code: string; message: string }; time: number };
  post: PostEvent; like: LikeEvent; comment: CommentEvent; post_deleted: PostDeletedEvent; comment_removed: CommentRemovedEvent;
  /** Every feed event (post, like, comment, post_deleted, comment_removed). */
  feed: FeedEvent;
  memory_changed: {
    event: 'memory_changed'; action: 'created' | 'updated' | 'deleted' | 'point_added' | 'point_updated' | 'point_deleted';
    memory_id: number; memory?: Memory; point?: Point; point_id?: number; time: number;
  };
  /** A connection is open and signed in (user null while anonymous); `resumed`: the same user as before a drop. */
  connected: { user: User | null; resumed: boolean };
  reconnecting: { attempt: number; delayMs: number; reason: string };
  /** A subscription resumed; `recovered: false`: publications were missed (page `history`). */
  recovered: { channel: string; recovered: boolean };
  subscription_ended: { channel: string; error: HuddleError };
  /** Where the owner of a subscribed `loc:` channel is, from the subscribe reply. */
  whereabouts: { user: string; place: string; place_id?: number; since: number | null };
  signed_in: { user: User };
  state: { state: ClientState };
  stopped: { reason: 'requested' | 'authentication_failed' | 'gave_up'; code?: string; message?: string; attempts?: number; lastReason?: string };
}

export declare class HuddleError extends Error {
  code: string;
  details: Record<string, unknown>;
  retryAfterMs?: number;
}

export declare const IDEMPOTENCY_KEYS: Readonly<Record<string, string>>;
export declare const SAFE_TO_REPEAT: ReadonlySet<string>;
export declare function backoffDelay(attempt: number, policy?: { initialDelayMs?: number; maxDelayMs?: number }, random?: () => number): number;
export declare function makeClientId(): string;

type Key = { clientId?: string | null };
type SignedIn = { user: User; token: string; expires_at: number };
type LinkedIdentity = { issuer: string; subject: string; linked_at: number };
type SubscribeResult = {
  channel: string; epoch: string; offset: number; recovered?: boolean;
  publications: Omit<PublicationEvent, 'event' | 'channel' | 'epoch'>[];
  current?: { place: string; place_id?: number; since: number | null };
};
type HistoryPage = { channel: string; epoch: string; offset: number; publications: Omit<PublicationEvent, 'event' | 'channel' | 'epoch'>[]; next_before: number | null };
type Duplicate = { duplicate?: true };

export declare class HuddleClient {
  constructor(options: HuddleClientOptions);
  readonly state: ClientState;
  readonly user: User | null;
  readonly token: string | null;
  readonly positions: Record<string, Position>;
  on<K extends keyof HuddleEvents>(name: K, handler: (event: HuddleEvents[K]) => void): () => void;
  on(name: '*', handler: (name: keyof HuddleEvents, event: unknown) => void): () => void;
  start(): Promise<void>;
  stop(): void;
  reconnectNow(reason?: string): void;
  request<T = Record<string, unknown>>(op: string, args?: Record<string, unknown>, options?: { resend?: boolean }): Promise<T>;
  static chatChannel(a: string, b: string): string;

  ping(): Promise<{ time: number }>;
  signup(args: { username: string; email: string; password: string; device?: string }): Promise<SignedIn>;
  login(args: { login: string; password: string; device?: string }): Promise<SignedIn>;
  auth(token: string): Promise<{ user: User; expires_at: number }>;
  logout(options?: { all?: boolean }): Promise<{ revoked: number }>;
  whoami(): Promise<{ user: User; expires_at: number }>;
  /** Deletes the account (with the password, or the ID token of a fresh sign-in); the client then continues anonymously. */
  accountDelete(proof: { password: string } | { token: string; nonce?: string }): Promise<{}>;
  accountExport(): Promise<{ export: Record<string, unknown> }>;

  identitySignIn(args: { token: string; nonce?: string; username?: string; device?: string }): Promise<SignedIn>;
  appAuth(args: { token: string; device?: string }): Promise<SignedIn>;
  identityLink(args: { token: string; nonce?: string }): Promise<{ identities: LinkedIdentity[] }>;
  identityUnlink(issuer: string, subject: string): Promise<{ identities: LinkedIdentity[] }>;
  identities(): Promise<{ identities: LinkedIdentity[] }>;

  subscribe(channel: string, options?: { since?: Position }): Promise<SubscribeResult>;
  unsubscribe(channel: string): Promise<{}>;
  publish(channel: string, data: unknown, options?: { type?: string } & Key): Promise<Position & { time: number } & Duplicate>;
  history(channel: string, options?: { before?: number; limit?: number }): Promise<HistoryPage>;
  presence(channel: string): Promise<{ channel: string; users: string[] }>;

  userSearch(prefix: string, options?: { limit?: number }): Promise<{ users: string[]; display_names?: Record<string, string> }>;
  friendRequest(user: string, options?: { message?: string } & Key): Promise<{ status: 'requested' | 'friends' }>;
  friendRequests(): Promise<{ incoming: ({ user: string; message: string; time: number } & Profile)[]; outgoing: ({ user: string; message: string; time: number } & Profile)[] }>;
  friendAccept(user: string, options?: Key): Promise<{}>;
  friendDecline(user: string, options?: Key): Promise<{}>;
  friendCancel(user: string, options?: Key): Promise<{}>;
  friendRemove(user: string, options?: Key): Promise<{}>;
  friends(): Promise<{ friends: ({ username: string; online: boolean } & Profile)[] }>;

  profile(): Promise<OwnProfile>;
  profileSet(fields: { displayName?: string; avatar?: string }): Promise<OwnProfile>;
  sessions(): Promise<{ sessions: Session[]; total: number }>;
  sessionRevoke(session: string): Promise<{ revoked: number }>;
  passwordChange(oldPassword: string, newPassword: string, options?: { revokeOthers?: boolean }): Promise<{ revoked: number }>;
  passwordResetRequest(login: string): Promise<{}>;
  passwordReset(fields: { login: string; code: string; newPassword: string }): Promise<{ revoked: number }>;

  block(user: string, options?: Key): Promise<{}>;
  unblock(user: string, options?: Key): Promise<{}>;
  blocks(): Promise<{ users: string[] }>;
  report(
    target: { kind: 'user'; user: string } | { kind: 'message'; channel: string; offset: number } | { kind: 'post'; post: number } | { kind: 'comment'; post: number; comment: number },
    reason: 'spam' | 'harassment' | 'hate' | 'violence' | 'sexual' | 'self_harm' | 'impersonation' | 'other',
    options?: { text?: string },
  ): Promise<{ report: number }>;

  markRead(channel: string, offset: number, options?: Key): Promise<{ channel: string; read: number; unread: number; badge: number }>;
  unread(): Promise<{ rooms: { channel: string; offset: number; read: number; unread: number }[]; total: number }>;
  typing(channel: string): Promise<{}>;

  post(text: string, options?: { activity?: string; at?: number } & Key): Promise<{ post: Post }>;
  feed(options?: { before?: number; limit?: number }): Promise<{ posts: Post[]; next_before: number | null }>;
  like(post: number, options?: { liked?: boolean } & Key): Promise<{ post: number; liked: boolean; likes: number }>;
  comment(post: number, text: string, options?: Key): Promise<{ post: number; comment: Comment; comments: number }>;
  comments(post: number, options?: { before?: number; limit?: number }): Promise<{ post: number; comments: Comment[]; next_before: number | null }>;
  postDelete(post: number, options?: Key): Promise<{}>;

  activities(): Promise<{ available: string[]; mine: { activity: string; audience: string[] | null; since: number; expires_at: number }[] }>;
  activityOn(activity: string, options?: { friends?: string[]; expiresIn?: number } & Key): Promise<{ activity: string; audience: string[] | null; since: number; expires_at: number }>;
  activityOff(activity: string, options?: Key): Promise<{}>;
  matches(options?: { order?: 'time' | 'activity' }): Promise<{ matches: { user: string; activity: string; since: number }[] }>;

  placeSet(args: { placeId?: number; label: string; lat: number; lon: number; radius: number } & Key): Promise<{ place: { id: number; label: string; lat: number; lon: number; radius: number } }>;
  placeRemove(placeId: number, options?: Key): Promise<{}>;
  places(): Promise<{ places: { id: number; label: string; lat: number; lon: number; radius: number }[] }>;
  locationFix(fix: { lat: number; lon: number; accuracy: number; time?: number }): Promise<PlaceDecision>;
  region(placeId: number, event: 'enter' | 'exit', options?: { time?: number }): Promise<PlaceDecision>;
  where(user: string): Promise<{ user: string; place: string; place_id?: number; since: number | null }>;

  memoryCreate(args: { title: string; date: string; placeName?: string; position?: MemoryPosition } & Key): Promise<{ memory: Memory }>;
  memoryUpdate(memory: number, changes: { title?: string; date?: string; placeName?: string; position?: MemoryPosition | null } & Key): Promise<{ memory: Memory }>;
  memoryDelete(memory: number, options?: Key): Promise<{}>;
  memories(): Promise<{ memories: Memory[] }>;
  memory(memory: number): Promise<{ memory: Memory }>;
  pointAdd(memory: number, point: { time: number; position?: MemoryPosition; placeName?: string; note?: string; photos?: string[] } & Key): Promise<{ memory: number; point: Point }>;
  pointUpdate(memory: number, point: number, changes: { time?: number; position?: MemoryPosition | null; placeName?: string; note?: string; photos?: string[] } & Key): Promise<{ memory: number; point: Point }>;
  pointDelete(memory: number, point: number, options?: Key): Promise<{}>;

  uploadPhoto(bytes: Blob | ArrayBuffer | ArrayBufferView): Promise<{ hash: string; size: number }>;
  photo(hash: string): Promise<Blob>;
  /** The export archive (`GET /api/v1/export`): a tar of export.json and the photos. Rejects with
   * `download_incomplete` when the body ends short of its Content-Length; with the server's
   * `exports_limited`/`too_many_exports` (429, `retryAfterMs`) or `invalid_token`/`token_expired` (401: sign in again). */
  exportArchive(options?: { onProgress?: (progress: ExportProgress) => void }): Promise<ExportArchive>;
}

export default HuddleClient;

/** A user's display name and avatar (a photo hash), each present only when set (protocol.md, "Profiles"). */
export interface Profile { display_name?: string; avatar?: string }
/** The caller's own profile: both always present, null when unset. */
export interface OwnProfile { username: string; display_name: string | null; avatar: string | null }
export interface Session {
  id: string; device: string | null; created_at: number; last_seen_at: number; expires_at: number; connected: boolean; current: boolean;
}
/** `received` bytes of the archive so far, of `total` (its Content-Length; null when a proxy dropped it). */
export interface ExportProgress { received: number; total: number | null }
/** The archive as `filename` (`huddle-export-USERNAME.tar`): a Blob in a page, bytes elsewhere (Node, React Native). */
export type ExportArchive = { filename: string; size: number } & ({ blob: Blob; bytes?: undefined } | { bytes: Uint8Array; blob?: undefined });
