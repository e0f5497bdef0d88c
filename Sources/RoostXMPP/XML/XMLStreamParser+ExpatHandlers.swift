internal import CExpat

/// Expat calls plain C functions with an opaque pointer; these closures capture nothing and only
/// forward to the parser, which must not throw across C and instead records failures itself.
extension XMLStreamParser {
    private static func parser(_ userData: UnsafeMutableRawPointer?) -> XMLStreamParser {
        Unmanaged<XMLStreamParser>.fromOpaque(userData!).takeUnretainedValue()
    }

    /// The handle must be owned by `self`: the user data pointer is unretained.
    func installHandlers(on handle: XML_Parser) {
        XML_SetUserData(handle, Unmanaged.passUnretained(self).toOpaque())
        XML_SetElementHandler(
            handle,
            { userData, name, attributes in
                guard let name else { return }
                XMLStreamParser.parser(userData).didStartElement(name, attributes)
            },
            { userData, _ in XMLStreamParser.parser(userData).didEndElement() })
        XML_SetCharacterDataHandler(handle) { userData, text, length in
            guard let text, length > 0 else { return }
            let bytes = UnsafeRawPointer(text).assumingMemoryBound(to: UInt8.self)
            XMLStreamParser.parser(userData).didReceiveText(UnsafeBufferPointer(start: bytes, count: Int(length)))
        }
        XML_SetXmlDeclHandler(handle) { userData, _, encoding, _ in
            XMLStreamParser.parser(userData).didDeclareXML(encoding: encoding)
        }
        // RFC 6120 §11.1: no comments, processing instructions, DTDs or entity declarations. Refusing
        // the DOCTYPE before its internal subset is read also rules out entity expansion attacks.
        XML_SetCommentHandler(handle) { userData, _ in XMLStreamParser.parser(userData).refuse("a comment") }
        XML_SetProcessingInstructionHandler(handle) { userData, _, _ in
            XMLStreamParser.parser(userData).refuse("a processing instruction")
        }
        XML_SetStartDoctypeDeclHandler(handle) { userData, _, _, _, _ in
            XMLStreamParser.parser(userData).refuse("a document type declaration")
        }
        XML_SetEntityDeclHandler(handle) { userData, _, _, _, _, _, _, _, _ in
            XMLStreamParser.parser(userData).refuse("an entity declaration")
        }
        XML_SetSkippedEntityHandler(handle) { userData, _, _ in
            XMLStreamParser.parser(userData).refuse("a reference to an undeclared entity")
        }
    }
}
