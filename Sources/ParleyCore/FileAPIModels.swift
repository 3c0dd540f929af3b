extension API {
    /// An upload as `GET /v1/uploads/{id}` and a creation's answer show it (docs/protocol.md "Files").
    public struct Upload: Codable, Sendable, Equatable {
        public var id: UploadID
        /// The cleaned file name.
        public var name: String
        /// The length promised at creation.
        public var size: Int64
        /// Bytes stored so far.
        public var offset: Int64
        /// Whether every byte arrived and the server read the file (then `mimeType` and `kind` are set).
        public var complete: Bool
        public var mimeType: String?
        public var kind: AttachmentKind?
        public var width: Int?
        public var height: Int?
        /// When it is removed unless a message carries it.
        public var expiresAt: Timestamp

        public init(
            id: UploadID, name: String, size: Int64, offset: Int64, complete: Bool, mimeType: String? = nil, kind: AttachmentKind? = nil,
            width: Int? = nil, height: Int? = nil, expiresAt: Timestamp
        ) {
            self.id = id
            self.name = name
            self.size = size
            self.offset = offset
            self.complete = complete
            self.mimeType = mimeType
            self.kind = kind
            self.width = width
            self.height = height
            self.expiresAt = expiresAt
        }
    }

    /// `POST /v1/files/links`: the attachments to make links for.
    public struct FileLinksRequest: Codable, Sendable, Equatable {
        public var ids: [UploadID]
        public init(ids: [UploadID]) { self.ids = ids }
    }

    /// A signed path to a file, valid until `expiresAt`, that works without the session token.
    public struct FileLink: Codable, Sendable, Equatable {
        public var id: UploadID
        public var url: String
        public var expiresAt: Timestamp
        public init(id: UploadID, url: String, expiresAt: Timestamp) {
            self.id = id
            self.url = url
            self.expiresAt = expiresAt
        }
    }

    /// The links for the attachments the caller can see (the others are left out).
    public struct FileLinks: Codable, Sendable, Equatable {
        public var links: [FileLink]
        public init(links: [FileLink]) { self.links = links }
    }

    /// The most ids one links request may name.
    public static let maxFileLinks = 100
}

extension API {
    /// `PUT /v1/me/photo`: a complete image upload of mine becomes my profile photo.
    public struct PhotoRequest: Codable, Sendable, Equatable {
        public var uploadId: UploadID
        public init(uploadId: UploadID) { self.uploadId = uploadId }
    }

    /// Where a profile photo loads from (``User/photo``): the upload's id, so the path changes with
    /// the photo and a browser may cache each one for good.
    public static func photoPath(_ upload: UploadID) -> String { "/v1/photos/\(upload.rawValue)" }
}
