import Foundation

/// SSIMULACRA 2.1's weights and its final mapping (`Msssim::Score` in
/// tools/ssimulacra2.cc at 0d8651b0; the numbers are the metric's definition,
/// tuned by its author on CID22, TID2013, KADID-10k and KonFiG-IQA).
enum SSIMULACRA2Weights {
    /// One scale's 18 norms, grouped as libjxl's `MsssimScale`: per channel
    /// (X, Y, B), the SSIM' mean and 4-norm, then the artifact mean and
    /// 4-norm and the detail-lost mean and 4-norm.
    struct Scale {
        var ssim = [Double](repeating: 0, count: 6)
        var edges = [Double](repeating: 0, count: 12)
    }

    /// Per channel, per scale (1:1 … 1:32), per norm (1, then 4): the weight
    /// of SSIM', of artifacts, of detail lost. A row is one channel and scale.
    static let weights: [Double] = [
        0.0, 0.0007376606707406586, 0.0, 0.0, 0.0007793481682867309, 0.0, // X 1:1
        0.0, 0.0004371155730107379, 0.0, 1.1041726426657346, 0.00066284834129271, 0.00015231632783718752, // X 1:2
        0.0, 0.0016406437456599754, 0.0, 1.8422455520539298, 11.441172603757666, 0.0, // X 1:4
        0.0007989109436015163, 0.000176816438078653, 0.0, 1.8787594979546387, 10.94906990605142, 0.0, // X 1:8
        0.0007289346991508072, 0.9677937080626833, 0.0, 0.00014003424285435884, 0.9981766977854967, 0.00031949755934435053, // X 1:16
        0.0004550992113792063, 0.0, 0.0, 0.0013648766163243398, 0.0, 0.0, // X 1:32
        0.0, 0.0, 0.0, 7.466890328078848, 0.0, 17.445833984131262, // Y 1:1
        0.0006235601634041466, 0.0, 0.0, 6.683678146179332, 0.00037724407979611296, 1.027889937768264, // Y 1:2
        225.20515300849274, 0.0, 0.0, 19.213238186143016, 0.0011401524586618361, 0.001237755635509985, // Y 1:4
        176.39317598450694, 0.0, 0.0, 24.43300999870476, 0.28520802612117757, 0.0004485436923833408, // Y 1:8
        0.0, 0.0, 0.0, 34.77906344483772, 44.835625328877896, 0.0, // Y 1:16
        0.0, 0.0, 0.0, 0.0, 0.0, 0.0, // Y 1:32
        0.0, 0.0008680556573291698, 0.0, 0.0, 0.0, 0.0, // B 1:1
        0.0, 0.0005313191874358747, 0.0, 0.00016533814161379112, 0.0, 0.0, // B 1:2
        0.0, 0.0, 0.0, 0.0004179171803251336, 0.0017290828234722833, 0.0, // B 1:4
        0.0020827005846636437, 0.0, 0.0, 8.826982764996862, 23.19243343998926, 0.0, // B 1:8
        95.1080498811086, 0.9863978034400682, 0.9834382792465353, 0.0012286405048278493, 171.2667255897307, 0.9807858872435379, // B 1:16
        0.0, 0.0, 0.0, 0.0005130064588990679, 0.0, 0.00010854057858411537, // B 1:32
    ]

    /// The weighted sum of the scales' norms mapped to the score (100 for no
    /// difference, 90 ≈ visually lossless, falling without bound).
    ///
    /// The weights are consumed in order over the scales there are, as
    /// libjxl's loop does: with fewer than six scales (a side of 112 px or less)
    /// the later channels' norms meet earlier weights. That is the metric
    /// as published, so thumbd keeps it.
    static func score(_ scales: [Scale]) -> Double {
        var sum = 0.0
        var i = 0
        for c in 0..<3 {
            for scale in scales {
                for n in 0..<2 {
                    sum += weights[i] * abs(scale.ssim[c * 2 + n])
                    sum += weights[i + 1] * abs(scale.edges[c * 4 + n])
                    sum += weights[i + 2] * abs(scale.edges[c * 4 + n + 2])
                    i += 3
                }
            }
        }
        var s = sum * 0.9562382616834844
        s = 2.326765642916932 * s - 0.020884521182843837 * s * s + 6.248496625763138e-05 * s * s * s
        return s > 0 ? 100 - 10 * pow(s, 0.6276336467831387) : 100
    }
}
