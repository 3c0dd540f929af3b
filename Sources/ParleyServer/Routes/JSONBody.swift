import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import ParleyCore

/// JSON in and out of REST handlers, with the error codes the API documents.
enum JSONBody {
    /// Reads the whole body (at most ``ServerLimits/maxBodyBytes``) and decodes it.
    /// Refuses invalid UTF-8 (`invalid_utf8`) before JSON parsing, which would otherwise lose the distinction.
    static func decode<T: Decodable>(_ type: T.Type, from request: Request, context: ParleyRequestContext) async throws -> T {
        guard isJSON(request.headers[.contentType]) else {
            throw ParleyError(.unsupportedMediaType, "Send the body as JSON with 'Content-Type: application/json'.")
        }
        // Refused from its head: a client that declares too much is not made to send it, nor
        // held until the body timeout when it never does.
        if let declared = request.headers[.contentLength].flatMap({ Int($0) }), declared > context.maxUploadSize {
            throw ParleyError(.payloadTooLarge, "The request body is larger than \(context.maxUploadSize) bytes.")
        }
        var request = request
        let buffer: ByteBuffer
        do {
            buffer = try await request.collectBody(upTo: context.maxUploadSize)
        } catch is RequestBodyCut, is IOError {  // the connection ended it (a reset is an IOError)
            throw RequestBodyCut()
        } catch {
            throw ParleyError(.payloadTooLarge, "The request body is larger than \(context.maxUploadSize) bytes.")
        }
        let bytes = Array(buffer.readableBytesView)
        guard String(validating: bytes, as: UTF8.self) != nil else {
            throw ParleyError(.invalidUTF8, "The request body is not valid UTF-8.")
        }
        if let fields = T.self as? any DeclaredFields.Type,
            let field = ExplicitNull.field(in: bytes, declared: fields.declaredFields, nested: fields.nestedDeclaredFields)
        {
            throw ParleyError(.invalidJSON, ExplicitNull.message(field: field))
        }
        do {
            return try JSONDecoder().decode(T.self, from: Data(bytes))
        } catch DecodingError.dataCorrupted(let context) where context.codingPath.isEmpty {
            throw ParleyError(.invalidJSON, "The request body is not valid JSON.")
        } catch let error as DecodingError {
            throw ParleyError(.invalidJSON, "The request body does not match the expected shape (\(describe(error))).")
        }
    }

    /// `application/json`, or any `+json` type, with any parameters (`; charset=utf-8`).
    static func isJSON(_ contentType: String?) -> Bool {
        guard let mediaType = contentType?.split(separator: ";").first?.trimmingSpaces.lowercased() else { return false }
        return mediaType == "application/json" || (mediaType.hasPrefix("application/") && mediaType.hasSuffix("+json"))
    }

    static func response<T: Encodable>(_ value: T, status: HTTPResponse.Status = .ok) throws -> Response {
        let data = try WireFormat.encoder().encode(value)
        return Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// Names the offending field without echoing any input.
    private static func describe(_ error: DecodingError) -> String {
        switch error {
        case .keyNotFound(let key, let context): "missing '\(path(context.codingPath + [key]))'"
        case .typeMismatch(_, let context), .valueNotFound(_, let context): "wrong type for '\(path(context.codingPath))'"
        case .dataCorrupted(let context): "invalid '\(path(context.codingPath))'"
        @unknown default: "invalid"
        }
    }

    /// A field's path as a client writes it (`attachments[0].uploadId`), not in the decoder's words
    /// (`attachments.Index 0.uploadId`). Every name is one of the schema's, never the client's.
    static func path(_ codingPath: [any CodingKey]) -> String {
        codingPath.reduce(into: "") { path, key in
            if let index = key.intValue, key.stringValue.hasPrefix("Index ") {
                path += "[\(index)]"
            } else {
                path += path.isEmpty ? key.stringValue : ".\(key.stringValue)"
            }
        }
    }
}

/// Typed query parameters with range checks, failing with `invalid_query`.
struct QueryReader {
    let request: Request

    func int(_ name: String, default value: Int, range: ClosedRange<Int>) throws -> Int {
        guard let raw = request.uri.queryParameters.get(name) else { return value }
        guard let number = Int(raw), range.contains(number) else {
            throw ParleyError(.invalidQuery, "'\(name)' must be a whole number from \(range.lowerBound) to \(range.upperBound).")
        }
        return number
    }

    func seq(_ name: String) throws -> Int64? {
        guard let raw = request.uri.queryParameters.get(name) else { return nil }
        guard let number = Int64(raw), number >= 0 else { throw ParleyError(.invalidQuery, "'\(name)' must be a seq (0 or more).") }
        return number
    }

    func string(_ name: String) -> String? {
        request.uri.queryParameters.get(name)
    }

    /// A text parameter (a search), read as HTML forms and `URLSearchParams` write it: `+` is a
    /// space and `%2B` a plus. The first one named wins; nil when absent or not UTF-8.
    func text(_ name: String) -> String? {
        guard let query = request.uri.query else { return nil }
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts[0].replacing("+", with: " ").removingPercentEncoding == name else { continue }
            return parts.count == 2 ? parts[1].replacing("+", with: " ").removingPercentEncoding : ""
        }
        return nil
    }
}
