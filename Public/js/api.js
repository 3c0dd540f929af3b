// REST calls. Errors carry the server's machine-readable code.

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export class Api {
  constructor(getToken) {
    this.getToken = getToken;
  }

  async request(method, path, body) {
    const headers = { Accept: "application/json" };
    const token = this.getToken();
    if (token) headers.Authorization = `Bearer ${token}`;
    if (body !== undefined) headers["Content-Type"] = "application/json";
    let response;
    try {
      response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    } catch {
      throw new ApiError(0, "offline", "Cannot reach the server.");
    }
    if (response.status === 204) return null;
    const data = await response.json().catch(() => null);
    if (!response.ok) {
      throw new ApiError(response.status, data?.error?.code ?? "error", data?.error?.message ?? `Request failed (${response.status}).`);
    }
    return data;
  }

  register(username, displayName, password) { return this.request("POST", "/v1/auth/register", { username, displayName, password }); }
  login(username, password) { return this.request("POST", "/v1/auth/login", { username, password }); }
  logout() { return this.request("POST", "/v1/auth/logout"); }
  logoutEverywhere() { return this.request("POST", "/v1/auth/logout-all"); }
  conversations() { return this.request("GET", "/v1/conversations?limit=100"); }
  conversation(id) { return this.request("GET", `/v1/conversations/${encodeURIComponent(id)}`); }
  history(id, before) {
    const query = before ? `?limit=50&before=${before}` : "?limit=50";
    return this.request("GET", `/v1/conversations/${encodeURIComponent(id)}/messages${query}`);
  }
  /** The oldest `limit` messages after seq `after` (ascending; `hasMore` when the range goes on). */
  historyAfter(id, after, limit = 50) {
    return this.request("GET", `/v1/conversations/${encodeURIComponent(id)}/messages?limit=${limit}&after=${after}`);
  }
  /** Message search (docs/protocol.md "Search"): `{results, nextCursor?}`. */
  searchMessages(query, { order = "newest", cursor = null, limit = 20 } = {}) {
    const params = new URLSearchParams({ q: query, order, limit: String(limit) });
    if (cursor) params.set("cursor", cursor);
    return this.request("GET", `/v1/search?${params}`);
  }
  searchUsers(query) { return this.request("GET", `/v1/users?limit=20&query=${encodeURIComponent(query)}`); }
  user(id) { return this.request("GET", `/v1/users/${encodeURIComponent(id)}`); }

  // Groups. Every action carries a clientId: the caller keeps it until the action succeeds, so a
  // retry after a network error answers the original entry instead of acting twice.
  createGroup(clientId, title, memberIds) { return this.request("POST", "/v1/groups", { clientId, title, memberIds }); }
  addMembers(id, clientId, userIds) { return this.request("POST", `${conversationPath(id)}/members`, { clientId, userIds }); }
  removeMember(id, userId, clientId) {
    return this.request("POST", `${conversationPath(id)}/members/${encodeURIComponent(userId)}/remove`, { clientId });
  }
  setRole(id, userId, role, clientId) {
    return this.request("POST", `${conversationPath(id)}/members/${encodeURIComponent(userId)}/role`, { clientId, role });
  }
  leaveGroup(id, clientId) { return this.request("POST", `${conversationPath(id)}/leave`, { clientId }); }
  renameGroup(id, title, clientId) { return this.request("POST", `${conversationPath(id)}/title`, { clientId, title }); }
  messageInfo(id, seq) { return this.request("GET", `${conversationPath(id)}/messages/${seq}/info`); }
  invitations() { return this.request("GET", "/v1/invitations"); }
  acceptInvitation(id, clientId) { return this.request("POST", `/v1/invitations/${encodeURIComponent(id)}/accept`, { clientId }); }
  declineInvitation(id) { return this.request("POST", `/v1/invitations/${encodeURIComponent(id)}/decline`); }

  // Notifications (push on this device, what they show, and per conversation: which messages, muted until).
  pushConfig() { return this.request("GET", "/v1/push/config"); }
  addPushSubscription(subscription) { return this.request("POST", "/v1/push/subscriptions", subscription); }
  removePushSubscription(endpoint) { return this.request("DELETE", "/v1/push/subscriptions", { endpoint }); }
  notificationSettings() { return this.request("GET", "/v1/notifications"); }
  setNotificationPreview(preview) { return this.request("PUT", "/v1/notifications", { preview }); }
  /** `change`: `{level: "all"|"mentions"|"none"}` and/or `{mute: "8h"|"1w"|"always"|"off"}`. */
  setConversationNotifications(id, change) { return this.request("PUT", `${conversationPath(id)}/notifications`, change); }
}

const conversationPath = (id) => `/v1/conversations/${encodeURIComponent(id)}`;
