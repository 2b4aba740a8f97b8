// Intentionally empty: CHuddleShims is header-only; SwiftPM needs one C source to build the module.
