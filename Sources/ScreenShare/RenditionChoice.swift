/// `--rendition`: the second encoding screenpub makes while a relay's viewer decodes none of what is shared (an
/// iPhone, WebKit without AV1 and VP9): H.264, or none (such a viewer's page then says it cannot decode the stream;
/// the machine never runs a second encoder).
public enum RenditionChoice: String, Sendable, Hashable, CaseIterable {
    case h264, none
}
