use futures::channel::mpsc;
use std::ffi::CString;

use crate::{error::*, msg_types::*, qos::QosProfile};
use r2r_rcl::*;
use std::ffi::{c_void, CStr};

pub trait Subscriber_ {
    fn handle(&self) -> &rcl_subscription_t;
    /// Returns true if the subscriber stream has been dropped.
    fn handle_incoming(&mut self) -> bool;
    fn destroy(&mut self, node: &mut rcl_node_t);
}

pub struct TypedSubscriber<T>
where
    T: WrappedTypesupport,
{
    pub rcl_handle: rcl_subscription_t,
    pub sender: mpsc::Sender<T>,
}

pub struct NativeSubscriber<T>
where
    T: WrappedTypesupport,
{
    pub rcl_handle: rcl_subscription_t,
    pub sender: mpsc::Sender<WrappedNativeMsg<T>>,
}

pub struct UntypedSubscriber {
    pub rcl_handle: rcl_subscription_t,
    pub topic_type: String,
    pub sender: mpsc::Sender<Result<serde_json::Value>>,
}

pub struct RawSubscriber {
    pub rcl_handle: rcl_subscription_t,
    pub msg_buf: rcl_serialized_message_t,
    pub sender: mpsc::Sender<Vec<u8>>,
}

impl<T: 'static> Subscriber_ for TypedSubscriber<T>
where
    T: WrappedTypesupport,
{
    fn handle(&self) -> &rcl_subscription_t {
        &self.rcl_handle
    }

    fn handle_incoming(&mut self) -> bool {
        let mut msg_info = rmw_message_info_t::default(); // we dont care for now
        let mut msg = WrappedNativeMsg::<T>::new();
        let ret = unsafe {
            rcl_take(&self.rcl_handle, msg.void_ptr_mut(), &mut msg_info, std::ptr::null_mut())
        };
        if ret == RCL_RET_OK as i32 {
            let msg = T::from_native(&msg);
            if let Err(e) = self.sender.try_send(msg) {
                if e.is_disconnected() {
                    // user dropped the handle to the stream, signal removal.
                    return true;
                }
                log::debug!("error {:?}", e)
            }
        }
        false
    }

    fn destroy(&mut self, node: &mut rcl_node_t) {
        unsafe {
            rcl_subscription_fini(&mut self.rcl_handle, node);
        }
    }
}

/// What the middleware reports with a taken message (rmw's `rmw_message_info_t`).
///
/// Added by tf_shm's local copy of r2r 0.9.7 (see `PATCHED.md` at the crate root): upstream
/// r2r discards the message info, so a subscriber cannot see the publisher's sequence numbers
/// and therefore cannot count the messages the middleware dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MessageInfo {
    /// When the publisher sent the message, ns since the epoch (0 if not reported).
    pub source_timestamp: i64,
    /// When this subscription received it, ns since the epoch (0 if not reported).
    pub received_timestamp: i64,
    /// The publisher's sequence number for this message: consecutive messages of one
    /// publisher differ by 1. `u64::MAX` (rmw's `RMW_MESSAGE_INFO_SEQUENCE_NUMBER_UNSUPPORTED`)
    /// when the middleware does not report it.
    pub publication_sequence_number: u64,
    /// This subscription's sequence number of receptions (`u64::MAX` if not reported).
    pub reception_sequence_number: u64,
    /// The publisher's global id.
    pub publisher_gid: [u8; 16],
    /// Whether the message came through intra-process communication.
    pub from_intra_process: bool,
}

impl MessageInfo {
    fn from_rmw(info: &rmw_message_info_t) -> MessageInfo {
        MessageInfo {
            source_timestamp: info.source_timestamp,
            received_timestamp: info.received_timestamp,
            publication_sequence_number: info.publication_sequence_number,
            reception_sequence_number: info.reception_sequence_number,
            publisher_gid: info.publisher_gid.data,
            from_intra_process: info.from_intra_process,
        }
    }
}

/// A typed subscription whose stream yields each message with its [`MessageInfo`].
pub struct InfoSubscriber<T>
where
    T: WrappedTypesupport,
{
    pub rcl_handle: rcl_subscription_t,
    pub sender: mpsc::Sender<(T, MessageInfo)>,
}

impl<T: 'static> Subscriber_ for InfoSubscriber<T>
where
    T: WrappedTypesupport,
{
    fn handle(&self) -> &rcl_subscription_t {
        &self.rcl_handle
    }

    fn handle_incoming(&mut self) -> bool {
        let mut msg_info = unsafe { rmw_get_zero_initialized_message_info() };
        let mut msg = WrappedNativeMsg::<T>::new();
        let ret = unsafe {
            rcl_take(&self.rcl_handle, msg.void_ptr_mut(), &mut msg_info, std::ptr::null_mut())
        };
        if ret == RCL_RET_OK as i32 {
            let msg = T::from_native(&msg);
            if let Err(e) = self.sender.try_send((msg, MessageInfo::from_rmw(&msg_info))) {
                if e.is_disconnected() {
                    return true;
                }
                log::debug!("error {:?}", e)
            }
        }
        false
    }

    fn destroy(&mut self, node: &mut rcl_node_t) {
        unsafe {
            rcl_subscription_fini(&mut self.rcl_handle, node);
        }
    }
}

/// A raw subscription whose stream yields each serialized message with its [`MessageInfo`].
///
/// Added by tf_shm's local copy of r2r 0.9.7 (see `PATCHED.md` at the crate root).
pub struct RawInfoSubscriber {
    pub rcl_handle: rcl_subscription_t,
    pub msg_buf: rcl_serialized_message_t,
    pub sender: mpsc::Sender<(Vec<u8>, MessageInfo)>,
}

impl Subscriber_ for RawInfoSubscriber {
    fn handle(&self) -> &rcl_subscription_t {
        &self.rcl_handle
    }

    fn handle_incoming(&mut self) -> bool {
        let mut msg_info = unsafe { rmw_get_zero_initialized_message_info() };
        let ret = unsafe {
            rcl_take_serialized_message(
                &self.rcl_handle,
                &mut self.msg_buf as *mut rcl_serialized_message_t,
                &mut msg_info,
                std::ptr::null_mut(),
            )
        };
        if ret != RCL_RET_OK as i32 {
            return false;
        }
        let data_bytes = if self.msg_buf.buffer == std::ptr::null_mut() {
            Vec::new()
        } else {
            unsafe {
                std::slice::from_raw_parts(self.msg_buf.buffer, self.msg_buf.buffer_length).to_vec()
            }
        };
        if let Err(e) = self.sender.try_send((data_bytes, MessageInfo::from_rmw(&msg_info))) {
            if e.is_disconnected() {
                return true;
            }
            log::debug!("error {:?}", e)
        }
        false
    }

    fn destroy(&mut self, node: &mut rcl_node_t) {
        unsafe {
            rcl_subscription_fini(&mut self.rcl_handle, node);
            rcutils_uint8_array_fini(&mut self.msg_buf as *mut rcl_serialized_message_t);
        }
    }
}

/// A serialized subscription whose messages go to a closure on the middleware's own thread as
/// they arrive (`Node::subscribe_raw_on_message`): rmw's new-message callback takes every
/// waiting message, each borrowed in place, so no wait set, stream or other thread is involved.
pub struct CallbackRawSubscriber {
    pub rcl_handle: rcl_subscription_t,
    inner: std::sync::Mutex<CallbackInner>,
}

struct CallbackInner {
    msg_buf: rcl_serialized_message_t,
    f: Box<dyn FnMut(&[u8], MessageInfo) + Send>,
}

// The buffer's pointer is owned by this subscription and used under the mutex only.
unsafe impl Send for CallbackInner {}

impl CallbackRawSubscriber {
    pub fn new(
        rcl_handle: rcl_subscription_t, msg_buf: rcl_serialized_message_t,
        f: Box<dyn FnMut(&[u8], MessageInfo) + Send>,
    ) -> CallbackRawSubscriber {
        CallbackRawSubscriber {
            rcl_handle,
            inner: std::sync::Mutex::new(CallbackInner { msg_buf, f }),
        }
    }

    /// Hands every waiting message to the closure (one caller at a time).
    pub fn drain(&self) {
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let CallbackInner { msg_buf, f } = &mut *inner;
        loop {
            let mut msg_info = unsafe { rmw_get_zero_initialized_message_info() };
            let ret = unsafe {
                rcl_take_serialized_message(
                    &self.rcl_handle,
                    msg_buf as *mut rcl_serialized_message_t,
                    &mut msg_info,
                    std::ptr::null_mut(),
                )
            };
            if ret != RCL_RET_OK as i32 {
                return;
            }
            let bytes: &[u8] = if msg_buf.buffer.is_null() {
                &[]
            } else {
                unsafe { std::slice::from_raw_parts(msg_buf.buffer, msg_buf.buffer_length) }
            };
            f(bytes, MessageInfo::from_rmw(&msg_info));
        }
    }

    /// Stops the callbacks: once this returns, the closure is not running and is not called
    /// again (rmw holds its callback lock while calling; the drain lock covers the rest).
    pub fn stop(&self) {
        unsafe {
            rcl_subscription_set_on_new_message_callback(&self.rcl_handle, None, std::ptr::null());
        }
        drop(self.inner.lock());
    }

    pub fn destroy(&mut self, node: &mut rcl_node_t) {
        self.stop();
        let inner = self.inner.get_mut().unwrap_or_else(|p| p.into_inner());
        unsafe {
            rcl_subscription_fini(&mut self.rcl_handle, node);
            rcutils_uint8_array_fini(&mut inner.msg_buf as *mut rcl_serialized_message_t);
        }
    }
}

/// rmw's new-message callback: `user_data` is the boxed [`CallbackRawSubscriber`].
pub extern "C" fn on_new_message(user_data: *const std::ffi::c_void, _number_of_events: usize) {
    let sub = unsafe { &*(user_data as *const CallbackRawSubscriber) };
    sub.drain();
}

impl<T: 'static> Subscriber_ for NativeSubscriber<T>
where
    T: WrappedTypesupport,
{
    fn handle(&self) -> &rcl_subscription_t {
        &self.rcl_handle
    }

    fn handle_incoming(&mut self) -> bool {
        let mut msg_info = rmw_message_info_t::default(); // we dont care for now
        let msg = unsafe {
            if rcl_subscription_can_loan_messages(&self.rcl_handle) {
                let mut loaned_msg: *mut c_void = std::ptr::null_mut();
                let ret = rcl_take_loaned_message(
                    &self.rcl_handle,
                    &mut loaned_msg,
                    &mut msg_info,
                    std::ptr::null_mut(),
                );
                if ret != RCL_RET_OK as i32 {
                    return false;
                }
                let handle_box = Box::new(self.rcl_handle);
                let deallocator = Box::new(|msg: *mut T::CStruct| {
                    let handle_ptr = Box::into_raw(handle_box);
                    let ret =
                        rcl_return_loaned_message_from_subscription(handle_ptr, msg as *mut c_void);
                    if ret == RCL_RET_OK as i32 {
                        drop(Box::from_raw(handle_ptr));
                    } else {
                        let topic_str = rcl_subscription_get_topic_name(handle_ptr);
                        let topic = CStr::from_ptr(topic_str).to_str().expect("to_str() call failed").to_owned();
                        drop(Box::from_raw(handle_ptr));

                        let err_str = rcutils_get_error_string();
                        let err_str_ptr = &(err_str.str_) as *const std::os::raw::c_char;
                        let error_msg = CStr::from_ptr(err_str_ptr);

                        // Returning a loan shouldn't fail unless one of the handles or pointers
                        // is invalid, both of which indicate a severe bug. Panicking is therefore
                        // more appropriate than leaking the loaned message.
                        panic!(
                            "rcl_return_loaned_message_from_subscription() \
                            failed for subscription on topic {}: {}",
                            topic,
                            error_msg.to_str().expect("to_str() call failed")
                        );
                    }
                });
                WrappedNativeMsg::<T>::from_loaned(loaned_msg as *mut T::CStruct, deallocator)
            } else {
                let mut new_msg = WrappedNativeMsg::<T>::new();
                let ret = rcl_take(
                    &self.rcl_handle,
                    new_msg.void_ptr_mut(),
                    &mut msg_info,
                    std::ptr::null_mut(),
                );
                if ret != RCL_RET_OK as i32 {
                    return false;
                }
                new_msg
            }
        };
        if let Err(e) = self.sender.try_send(msg) {
            if e.is_disconnected() {
                // user dropped the handle to the stream, signal removal.
                return true;
            }
            log::error!("error {:?}", e)
        }
        false
    }

    fn destroy(&mut self, node: &mut rcl_node_t) {
        unsafe {
            rcl_subscription_fini(&mut self.rcl_handle, node);
        }
    }
}

impl Subscriber_ for UntypedSubscriber {
    fn handle(&self) -> &rcl_subscription_t {
        &self.rcl_handle
    }

    fn handle_incoming(&mut self) -> bool {
        let mut msg_info = rmw_message_info_t::default(); // we dont care for now
        let mut msg = WrappedNativeMsgUntyped::new_from(&self.topic_type)
            .unwrap_or_else(|_| panic!("no typesupport for {}", self.topic_type));
        let ret = unsafe {
            rcl_take(&self.rcl_handle, msg.void_ptr_mut(), &mut msg_info, std::ptr::null_mut())
        };
        if ret == RCL_RET_OK as i32 {
            let json = msg.to_json();
            if let Err(e) = self.sender.try_send(json) {
                if e.is_disconnected() {
                    // user dropped the handle to the stream, signal removal.
                    return true;
                }
                log::debug!("error {:?}", e)
            }
        }
        false
    }

    fn destroy(&mut self, node: &mut rcl_node_t) {
        unsafe {
            rcl_subscription_fini(&mut self.rcl_handle, node);
        }
    }
}

impl Subscriber_ for RawSubscriber {
    fn handle(&self) -> &rcl_subscription_t {
        &self.rcl_handle
    }

    fn handle_incoming(&mut self) -> bool {
        let mut msg_info = rmw_message_info_t::default(); // we dont care for now
        let ret = unsafe {
            rcl_take_serialized_message(
                &self.rcl_handle,
                &mut self.msg_buf as *mut rcl_serialized_message_t,
                &mut msg_info,
                std::ptr::null_mut(),
            )
        };
        if ret != RCL_RET_OK as i32 {
            log::error!("failed to take serialized message");
            return false;
        }

        let data_bytes = if self.msg_buf.buffer == std::ptr::null_mut() {
            Vec::new()
        } else {
            unsafe {
                std::slice::from_raw_parts(self.msg_buf.buffer, self.msg_buf.buffer_length).to_vec()
            }
        };

        if let Err(e) = self.sender.try_send(data_bytes) {
            if e.is_disconnected() {
                // user dropped the handle to the stream, signal removal.
                return true;
            }
            log::debug!("error {:?}", e)
        }

        false
    }

    fn destroy(&mut self, node: &mut rcl_node_t) {
        unsafe {
            rcl_subscription_fini(&mut self.rcl_handle, node);
            rcutils_uint8_array_fini(&mut self.msg_buf as *mut rcl_serialized_message_t);
        }
    }
}

pub fn create_subscription_helper(
    node: &mut rcl_node_t, topic: &str, ts: *const rosidl_message_type_support_t,
    qos_profile: QosProfile,
) -> Result<rcl_subscription_t> {
    let mut subscription_handle = unsafe { rcl_get_zero_initialized_subscription() };
    let topic_c_string = CString::new(topic).map_err(|_| Error::RCL_RET_INVALID_ARGUMENT)?;

    let result = unsafe {
        let mut subscription_options = rcl_subscription_get_default_options();
        subscription_options.qos = qos_profile.into();
        rcl_subscription_init(
            &mut subscription_handle,
            node,
            ts,
            topic_c_string.as_ptr(),
            &subscription_options,
        )
    };
    if result == RCL_RET_OK as i32 {
        Ok(subscription_handle)
    } else {
        Err(Error::from_rcl_error(result))
    }
}
