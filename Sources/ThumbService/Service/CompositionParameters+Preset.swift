import ThumbRender

extension CompositionParameters {
    /// These parameters with a preset's filling those not given. A preset's
    /// `gravity` yields to a given `fp` (API.md § Composition): the point
    /// says where the window goes more precisely than the preset could.
    func filled(from preset: ServiceConfiguration.Preset?) -> CompositionParameters {
        guard let preset else { return self }
        var out = self
        if focalPoint == nil { out.gravity = gravity ?? preset.gravity }
        out.background = background ?? preset.background
        out.blurTenths = blurTenths ?? preset.blurTenths
        out.sharpenTenths = sharpenTenths ?? preset.sharpenTenths
        return out
    }
}
