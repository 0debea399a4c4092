"""Input validation of cuML estimators (cuml 26.10.0 ``cuml/internals/validation.py``), the dense parts that
``LinearRegression`` calls: ``check_features``, ``check_array``, ``check_y``, ``check_consistent_length``,
``check_all_finite`` and ``check_inputs``, with their messages. Arrays come out as NumPy (where cuML gives CuPy)."""

from __future__ import annotations

import warnings
from typing import Any

import cudf
import numpy as np
import pandas as pd
from pandas.api.types import is_string_dtype
from sklearn.exceptions import DataConversionWarning


def _check_shape(shape: tuple, *, ensure_2d: bool = True, ensure_min_samples: int = 0,
                 ensure_min_features: int = 0, array_type: type | None = None) -> None:
    ndim = len(shape)
    if ndim == 0 or ndim == 1 and ensure_2d:
        if array_type is not None and issubclass(array_type, (cudf.Series, pd.Series)):
            msg = (f"Expected a 2-dimensional container but got {array_type} instead. Pass a DataFrame containing a "
                   "single row (i.e. single sample) or a single column (i.e. single feature) instead.")
        else:
            kind = "scalar" if ndim == 0 else "1D"
            msg = (f"Expected 2D array, got {kind} array instead. Reshape your data using array.reshape(-1, 1) if "
                   "your data has a single feature, or array.reshape(1, -1) if it contains a single sample.")
        raise ValueError(msg)
    elif ndim > 2:
        raise ValueError(f"Expected 2D array, got {ndim}D array instead.")
    if ensure_min_samples > 0 and shape[0] < ensure_min_samples:
        raise ValueError(f"Found array with {shape[0]} sample(s) (shape={shape}) while a minimum of "
                         f"{ensure_min_samples} is required.")
    if ensure_min_features > 0 and ndim == 2 and shape[1] < ensure_min_features:
        raise ValueError(f"Found array with {shape[1]} feature(s) (shape={shape}) while a minimum of "
                         f"{ensure_min_features} is required.")


def _feature_names(X: Any) -> np.ndarray | None:
    if not isinstance(X, (pd.DataFrame, cudf.DataFrame)) or len(X.columns) == 0:
        return None
    names = np.asarray(X.columns, dtype=object)
    types = sorted(t.__qualname__ for t in {type(v) for v in names})
    if types == ["str"]:
        return names
    if len(types) > 1 and "str" in types:
        raise TypeError("Feature names are only supported if all input features have string names, but your input "
                        f"has {types} as feature name / column name types. If you want feature names to be stored "
                        "and validated, you must convert them all to strings, by using "
                        "X.columns = X.columns.astype(str) for example. Otherwise you can remove feature / column "
                        "names from your input data, or convert them all to a non-string data type.")
    return None


def check_features(estimator: Any, X: Any, reset: bool = False) -> None:
    """Set (``reset=True``) or check ``n_features_in_`` and ``feature_names_in_``."""
    shape = getattr(X, "shape", None) or np.asarray(X).shape
    _check_shape(shape, ensure_2d=True, array_type=type(X))
    n_features, names = shape[1], _feature_names(X)
    if reset:
        estimator.n_features_in_ = n_features
        if names is not None:
            estimator.feature_names_in_ = names
        elif hasattr(estimator, "feature_names_in_"):
            delattr(estimator, "feature_names_in_")
        return
    fitted = getattr(estimator, "feature_names_in_", None)
    if fitted is not None or names is not None:
        if fitted is None:
            warnings.warn(f"X has feature names, but {type(estimator).__name__} was fitted without feature names",
                          stacklevel=2)
        elif names is None:
            warnings.warn(f"X does not have valid feature names, but {type(estimator).__name__} was fitted with "
                          "feature names", stacklevel=2)
        elif len(fitted) != len(names) or np.any(fitted != names):
            unexpected, missing = sorted(set(names) - set(fitted)), sorted(set(fitted) - set(names))
            parts = ["The feature names should match those that were passed during fit."]
            for heading, found in [("Feature names unseen at fit time:", unexpected),
                                   ("Feature names seen at fit time, yet now missing:", missing)]:
                if found:
                    parts.append(heading)
                    parts.extend(f"- {name}" for name in found[:5])
                    if len(found) > 5:
                        parts.append("- ...")
            if not missing and not unexpected:
                parts.append("Feature names must be in the same order as they were in fit.")
            raise ValueError("\n".join(parts))
    if hasattr(estimator, "n_features_in_") and n_features != estimator.n_features_in_:
        raise ValueError(f"X has {n_features} features, but {type(estimator).__name__} is expecting "
                         f"{estimator.n_features_in_} features as input.")


def check_all_finite(array: np.ndarray, *, allow_nan: bool = False, input_name: str | None = None) -> None:
    if array.dtype.kind != "f" or not array.size:
        return
    has_nan = bool(np.isnan(array).any())
    has_inf = bool(np.isinf(array).any())
    if has_nan and not allow_nan:
        msg = "NaN"
    elif has_inf:
        msg = f"infinity or a value too large for {array.dtype!r}"
    else:
        return
    raise ValueError(f"Input {input_name or 'array'} contains {msg}.")


def _frame_dtype(array: Any) -> np.dtype | None:
    if all(isinstance(dt, np.dtype) for dt in array.dtypes):
        return np.result_type(*array.dtypes)
    if any(dt == "object" or is_string_dtype(dt) for dt in array.dtypes):
        return np.dtype("object")
    return None


def check_array(array: Any, *, dtype: Any = None, ensure_2d: bool = True, ensure_min_samples: int = 1,
                ensure_min_features: int = 1, ensure_all_finite: bool = True, input_name: str | None = None,
                return_index: bool = False) -> Any:
    """A dense array of a supported dtype: the input's if listed in ``dtype``, else the first listed."""
    if dtype is not None:
        dtype = [np.dtype(d) for d in (dtype if isinstance(dtype, (list, tuple)) else [dtype])]
    array_type = type(array)
    if isinstance(array, (cudf.DataFrame, pd.DataFrame)):
        array_dtype = _frame_dtype(array)
    else:
        array_dtype = getattr(array, "dtype", None)
        if array_dtype is not None and not isinstance(array_dtype, np.dtype):
            array_dtype = np.dtype("object") if is_string_dtype(array_dtype) else None
    if array_dtype is not None:
        if array_dtype.kind == "c":
            raise ValueError("Complex data not supported")
        chosen = array_dtype if dtype is None else (array_dtype if array_dtype in dtype else dtype[0])
    else:
        chosen = None if dtype is None else dtype[0]
    index = None
    if isinstance(array, (cudf.DataFrame, cudf.Series)):
        index, array = array.index, array.to_pandas().to_numpy(dtype=chosen)
    elif isinstance(array, (pd.DataFrame, pd.Series)):
        index, array = array.index, array.to_numpy(dtype=chosen)
    else:
        array = np.asarray(array, dtype=chosen)
    _check_shape(array.shape, array_type=array_type, ensure_2d=ensure_2d, ensure_min_samples=ensure_min_samples,
                 ensure_min_features=ensure_min_features)
    if ensure_all_finite:
        check_all_finite(array, allow_nan=ensure_all_finite == "allow-nan", input_name=input_name)
    return (array, index) if return_index else array


def check_y(y: Any, *, dtype: Any = None, accept_multi_output: bool = False) -> np.ndarray:
    if y is None:
        raise ValueError("This estimator requires y to be passed, but the target y is None")
    y = check_array(y, dtype=dtype, ensure_2d=False, ensure_min_samples=0, input_name="y")
    if y.ndim == 2:
        if y.shape[1] == 1 and not accept_multi_output:
            warnings.warn("A column-vector y was passed when a 1d array was expected. Please change the shape of y "
                          "to (n_samples,), for example using ravel().", DataConversionWarning, stacklevel=2)
        elif not accept_multi_output:
            raise ValueError(f"y should be a 1d array, got an array of shape {y.shape} instead.")
    return y


def check_consistent_length(*arrays: Any) -> None:
    lengths = [len(X) for X in arrays if X is not None]
    if len(set(lengths)) > 1:
        raise ValueError(f"Found input variables with inconsistent number of samples: {sorted(lengths)}")


def check_inputs(estimator: Any, X: Any, y: Any = ..., *, dtype: Any = None, ensure_min_samples: int = 1,
                 accept_multi_output: bool = False, return_index: bool = False, reset: bool = False) -> Any:
    """``check_features`` + ``check_array`` (X) + ``check_y`` (y, in X's dtype) + ``check_consistent_length``."""
    check_features(estimator, X, reset=reset)
    X, index = check_array(X, dtype=dtype, ensure_min_samples=ensure_min_samples, input_name="X", return_index=True)
    out = [X]
    if y is not ...:
        out.append(check_y(y, dtype=X.dtype, accept_multi_output=accept_multi_output))
    check_consistent_length(*out)
    if return_index:
        out.append(index)
    return out[0] if len(out) == 1 else tuple(out)
