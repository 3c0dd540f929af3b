import Foundation
import HTTPTypes
import Testing
import Yams

/// `openapi.yaml`, loaded once, with a checker for responses: the status must be documented for the
/// operation and the JSON body must match its schema. ``TestAPI`` checks every response it gets.
struct OpenAPISpec: @unchecked Sendable {
    static let shared: OpenAPISpec = {
        let url = TestServer.repositoryRoot.appendingPathComponent("openapi.yaml")
        do {
            let document = try Yams.load(yaml: String(contentsOf: url, encoding: .utf8)) as? [String: Any] ?? [:]
            return OpenAPISpec(document: document)
        } catch {
            Issue.record("openapi.yaml does not load: \(error)")
            return OpenAPISpec(document: [:])
        }
    }()

    let document: [String: Any]
    var paths: [String: Any] { document["paths"] as? [String: Any] ?? [:] }

    /// Every (METHOD, path template) the spec documents.
    var operations: Set<String> {
        Set(paths.flatMap { path, item in ((item as? [String: Any]) ?? [:]).keys.map { "\($0.uppercased()) \(path)" } })
    }

    /// Problems with one response; empty when it conforms. Paths or methods the spec does not know are
    /// not checked here (the route-set test covers those).
    func problems(method: HTTPRequest.Method, uri: String, status: Int, body: Data) -> [String] {
        let path = String(uri.split(separator: "?", maxSplits: 1).first ?? "")
        guard let template = paths.keys.first(where: { Self.matches(template: $0, path: path) }),
            let operation = (paths[template] as? [String: Any])?[method.rawValue.lowercased()] as? [String: Any]
        else { return [] }
        let where_ = "\(method) \(template) → \(status)"
        guard var response = (operation["responses"] as? [String: Any])?[String(status)] as? [String: Any] else {
            return ["\(where_): status not documented"]
        }
        if let ref = response["$ref"] as? String { response = resolve(ref) }
        guard let content = response["content"] as? [String: Any] else {
            return body.isEmpty ? [] : ["\(where_): documented without a body but has one"]
        }
        guard let schema = (content["application/json"] as? [String: Any])?["schema"] as? [String: Any] else { return [] }
        guard let json = try? JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed]) else {
            return ["\(where_): body is not JSON"]
        }
        return validate(json, against: schema, at: where_)
    }

    /// JSONSerialization gives NSNumbers, and an NSNumber 1 also casts to Bool: the encoding tells them apart.
    static func isBoolean(_ value: Any) -> Bool {
        guard let number = value as? NSNumber else { return value is Bool }
        return String(cString: number.objCType) == "c"
    }

    static func matches(template: String, path: String) -> Bool {
        let t = template.split(separator: "/"), p = path.split(separator: "/")
        return t.count == p.count && zip(t, p).allSatisfy { $0.hasPrefix("{") || $0 == $1 }
    }

    private func resolve(_ ref: String) -> [String: Any] {
        var node: Any = document
        for part in ref.dropFirst(2).split(separator: "/") { node = (node as? [String: Any])?[String(part)] ?? [:] }
        return node as? [String: Any] ?? [:]
    }

    /// The JSON Schema subset the spec uses: $ref, type, enum, required, properties,
    /// additionalProperties: false, items, minimum, minLength, maxLength, pattern, format uuid.
    func validate(_ value: Any, against schema: [String: Any], at path: String) -> [String] {
        if let ref = schema["$ref"] as? String { return validate(value, against: resolve(ref), at: path) }
        var problems: [String] = []
        switch schema["type"] as? String {
        case "object":
            guard let object = value as? [String: Any] else { return ["\(path): expected object"] }
            let properties = schema["properties"] as? [String: Any] ?? [:]
            for key in schema["required"] as? [String] ?? [] where object[key] == nil { problems.append("\(path).\(key): missing") }
            for (key, child) in object {
                if let property = properties[key] as? [String: Any] {
                    problems += validate(child, against: property, at: "\(path).\(key)")
                } else if schema["additionalProperties"] as? Bool == false {
                    problems.append("\(path).\(key): not in the schema")
                }
            }
        case "array":
            guard let array = value as? [Any] else { return ["\(path): expected array"] }
            let items = schema["items"] as? [String: Any] ?? [:]
            for (index, item) in array.enumerated() { problems += validate(item, against: items, at: "\(path)[\(index)]") }
        case "string":
            guard let string = value as? String else { return ["\(path): expected string"] }
            if let min = schema["minLength"] as? Int, string.count < min { problems.append("\(path): shorter than \(min)") }
            if let max = schema["maxLength"] as? Int, string.count > max { problems.append("\(path): longer than \(max)") }
            if let pattern = schema["pattern"] as? String, string.range(of: pattern, options: .regularExpression) == nil {
                problems.append("\(path): '\(string)' does not match \(pattern)")
            }
            if schema["format"] as? String == "uuid", UUID(uuidString: string) == nil { problems.append("\(path): not a uuid") }
            if let allowed = schema["enum"] as? [String], !allowed.contains(string) { problems.append("\(path): '\(string)' not in enum") }
        case "integer":
            guard !Self.isBoolean(value), let number = value as? Int else { return ["\(path): expected integer"] }
            if let min = schema["minimum"] as? Int, number < min { problems.append("\(path): below \(min)") }
        case "boolean":
            if !Self.isBoolean(value) { problems.append("\(path): expected boolean") }
        default:
            break
        }
        return problems
    }
}
