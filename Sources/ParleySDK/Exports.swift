// The SDK's API speaks in Parley's model types (User, Message, ConversationID…): an app that
// imports ParleySDK gets them without importing ParleyCore itself.
@_exported import ParleyCore
